"""A request in, a scripted response out: the shapes every runner shares.

Where things are: a runner turns what it received into a `Request`, asks for a
`Reply` and plays its steps in order: `Event` / `Raw` (bytes), `Encoded` (under
a Content-Encoding), `Repeat` (the same bytes again, maybe paced, maybe
forever, never held whole), `Pause`, `Drop` (the connection breaks) and
`Effect` (a server-side action, such as storing a message).
"""

from __future__ import annotations

import hmac
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from .. import DEFAULT_WIRE, WireFormat

_SURROGATE = re.compile(r"[\ud800-\udfff]")  # raw: no lone surrogate in the source


def json_text(value: object, separators: tuple[str, str] = (",", ":")) -> str:
    """JSON text UTF-8 can write: a lone surrogate (a str may hold one; it has no UTF-8
    form) as its `\\udXXX` escape, as JavaScript's `JSON.stringify` writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    # Outside strings JSON is ASCII, so every surrogate here is inside one.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_bytes(value: object) -> bytes:
    """Compact UTF-8 JSON, as the server writes every body and event."""
    return json_text(value).encode()


@dataclass(frozen=True)
class Event:
    """An SSE event with JSON data."""

    name: str
    data: object

    def encode(self) -> bytes:
        """One SSE event; compact JSON never holds a newline, so one `data:` line is enough."""
        return b"event: " + self.name.encode() + b"\ndata: " + json_bytes(self.data) + b"\n\n"


@dataclass(frozen=True)
class Raw:
    """Bytes written exactly as given: a comment, a malformed event, half an event."""

    data: bytes

    def encode(self) -> bytes:
        return self.data


@dataclass(frozen=True)
class Encoded:
    """`step` as it goes out under the reply's Content-Encoding: `data` on the wire.

    A reader of the steps (`expected_turn`) reads `step`; a runner writes `data`.
    """

    step: Event | Raw
    data: bytes = field(repr=False)

    def encode(self) -> bytes:
        return self.data


@dataclass(frozen=True)
class Repeat:
    """`data` written `times` times (None: until the client leaves), `every` seconds apart.

    Each copy is written as it is due, so what the server holds is one copy,
    whatever it sends in all. Between copies the runner watches for the client
    leaving, and stops there.
    """

    data: bytes = field(repr=False)
    times: int | None = None
    every: float = 0.0

    def __post_init__(self) -> None:
        if not self.data:
            raise ValueError("Repeat needs at least one byte to write")
        if self.times is not None and self.times < 0:
            raise ValueError("Repeat.times must be None or 0 or more")
        if not self.every >= 0:
            raise ValueError("Repeat.every must be 0 or more seconds")

    def copies(self) -> Iterator[None]:
        """One item per copy to write (endless when `times` is None)."""
        return itertools.repeat(None) if self.times is None else itertools.repeat(None, self.times)


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


Step: TypeAlias = Event | Raw | Encoded | Repeat | Pause | Drop | Effect

PING = Raw(b": ping\n\n")


def after_events(steps: Sequence[Step], events: int) -> int:
    """The index just past the `events`-th SSE event (clamped to the end)."""
    seen = 0
    for index, step in enumerate(steps):
        if seen >= events:
            return index
        if isinstance(step, Event):
            seen += 1
    return len(steps)


@dataclass(frozen=True)
class Reply:
    """What the server answers: a fixed body, or (when `steps` is set) a streamed one."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    steps: tuple[Step, ...] | None = None


def error_reply(
    status: int,
    error_type: str,
    message: str,
    *,
    wire: WireFormat = DEFAULT_WIRE,
    headers: Sequence[tuple[str, str]] = (),
) -> Reply:
    """An error reply in `wire`'s format: a JSON body `{"error": {"type", "message"}}`."""
    body = {wire.error_key: {"type": error_type, "message": message}}
    return Reply(status, (("content-type", "application/json"), *headers), body=json_bytes(body))


@dataclass(frozen=True)
class Request:
    """An HTTP request as the server sees it; header names lower-case."""

    method: str
    target: str  # the request target as sent: percent-encoded path, maybe a query
    headers: Mapping[str, str]
    body: bytes = b""

    def bearer(self, required: str | None) -> tuple[str, str | None]:
        """Its bearer token, and why a server requiring `required` (None: any) refuses it."""
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return token, "Missing bearer token."
        if required is not None and not hmac.compare_digest(token.encode(), required.encode()):
            return token, "Invalid bearer token."
        return token, None
