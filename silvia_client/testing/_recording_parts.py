"""What a recording is made of: the request, the response and its chunks, the reload.

Where things are: these parts, `RecordingFormatError`, `FORBIDDEN_HEADERS`
(dropped whoever builds a part) and `header_error` (why a replay cannot write a
header), below everything else about recordings; `_recording.py` is the map of
the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import SilviaError

FORBIDDEN_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Headers no recording ever holds (names lower-case)."""

BodyEnd = Literal["ended", "closed", "disconnected", "timeout"]
BODY_ENDS: tuple[BodyEnd, ...] = ("ended", "closed", "disconnected", "timeout")

Headers = tuple[tuple[str, str], ...]


class RecordingFormatError(SilviaError, ValueError):
    """A recording that cannot be read: truncated, corrupted, or from a newer format.

    `line` is the 1-based line the problem is on (None when it is the whole file);
    `path` is the file's, when `Recording.load` read one.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line
        self.path: str | None = None


def allowed_headers(headers: Iterable[tuple[str, str]]) -> Headers:
    """`headers` with lower-case names, without the `FORBIDDEN_HEADERS`."""
    return tuple(
        (name.lower(), value) for name, value in headers if name.lower() not in FORBIDDEN_HEADERS
    )


# A recording keeps any header, but a replay writes only what HTTP can carry.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 `token`
_NOT_VALUE = re.compile(r"[^\t\x20-\x7e]")  # a value is visible ASCII, spaces and tabs
_SHOWN = 60  # characters of a bad name shown in its error


def written_value(value: str) -> str:
    """A header value as a replay writes it: without leading or trailing spaces and tabs."""
    return value.strip(" \t")


def header_error(name: str, value: str, where: str) -> str | None:
    """Why a replay cannot write this header (escaped, ASCII only), or None."""
    if not _TOKEN.fullmatch(name):
        shown = ascii(name[:_SHOWN]) + ("..." if len(name) > _SHOWN else "")
        return f"the {where} header name {shown} is not an HTTP token (RFC 9110)"
    bad = _NOT_VALUE.search(value)
    if bad is None:
        return None
    character = bad.group()
    what = "a control character" if character.isascii() else "a character outside ASCII"
    what = "a line break" if character in "\r\n" else what
    return (
        f"the value of the {where} header {name} holds {what} (U+{ord(character):04X}), "
        "where HTTP allows visible ASCII, spaces and tabs"
    )


@dataclass(frozen=True)
class RecordedChunk:
    """Bytes of a response body as they arrived, `at` seconds after the request went out."""

    at: float
    data: bytes = field(repr=False)  # raw wire data: it may hold account ids and providers


@dataclass(frozen=True)
class RecordedRequest:
    """The chat request: method, path (no host) and JSON body; never its headers."""

    method: str
    path: str
    body: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class RecordedResponse:
    """The chat response: status, headers, the body's chunks and how the body ended."""

    status: int
    headers: Headers = field(default=(), repr=False)
    chunks: tuple[RecordedChunk, ...] = field(default=(), repr=False)
    end: BodyEnd = "ended"
    ended_at: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", allowed_headers(self.headers))
        object.__setattr__(self, "chunks", tuple(self.chunks))

    @property
    def body(self) -> bytes:
        """Every chunk's bytes, joined."""
        return b"".join(chunk.data for chunk in self.chunks)


@dataclass(frozen=True)
class RecordedReload:
    """The session GET after a completed turn: path, status, headers and body."""

    path: str
    status: int
    headers: Headers = field(default=(), repr=False)
    body: bytes = field(default=b"", repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", allowed_headers(self.headers))
