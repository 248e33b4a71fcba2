"""A request in, a scripted response out: the shapes every runner shares.

A runner (in-process transport, loopback server) turns what it received into a
`Request`, asks the server for a `Reply`, and plays it: a status, headers, and
either a fixed body or a list of steps. Each runner walks the steps in order,
so one scenario behaves identically under both:

* `Event` / `Raw`: bytes on the wire (an SSE event, or bytes exactly as given);
* `Pause`: nothing on the wire for a while (a stall, or pacing);
* `Drop`: the connection breaks here, mid-body;
* `Effect`: a server-side action at this point of the stream (storing a message).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = [
    "PING",
    "Drop",
    "Effect",
    "Event",
    "Pause",
    "Raw",
    "Reply",
    "Request",
    "Step",
    "encode_event",
    "json_bytes",
]


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(value: object) -> bytes:
    """Compact UTF-8 JSON, as the server writes every body and event.

    A lone surrogate has no UTF-8 form, so it goes out as a `\\udXXX` escape, as a
    JSON server (JavaScript's `JSON.stringify`) writes it; everything else as is.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Outside strings JSON is ASCII, so every surrogate here is inside one.
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode()


def encode_event(name: str, data: object) -> bytes:
    """One SSE event; compact JSON never holds a newline, so one `data:` line is enough."""
    return b"event: " + name.encode() + b"\ndata: " + json_bytes(data) + b"\n\n"


@dataclass(frozen=True)
class Event:
    """An SSE event with JSON data."""

    name: str
    data: object

    def encode(self) -> bytes:
        return encode_event(self.name, self.data)


@dataclass(frozen=True)
class Raw:
    """Bytes written exactly as given: a comment, a malformed event, half an event."""

    data: bytes

    def encode(self) -> bytes:
        return self.data


@dataclass(frozen=True)
class Pause:
    """No bytes for `seconds`. Longer than the reader's idle timeout, it is a stall."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """The connection breaks here, without ending the body."""


@dataclass(frozen=True)
class Effect:
    """A server-side action run when the stream reaches this point (e.g. storing a message)."""

    action: Callable[[], None] = field(compare=False)


Step: TypeAlias = Event | Raw | Pause | Drop | Effect

PING = Raw(b": ping\n\n")


@dataclass(frozen=True)
class Reply:
    """What the server answers: a fixed body, or (when `steps` is set) a streamed one."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    steps: tuple[Step, ...] | None = None

    @property
    def streaming(self) -> bool:
        return self.steps is not None


@dataclass(frozen=True)
class Request:
    """An HTTP request as the server sees it; header names lower-case."""

    method: str
    target: str  # the request target as sent: percent-encoded path, maybe a query
    headers: Mapping[str, str]
    body: bytes = b""
