"""A recorded stream cut into its SSE events, each with its place in the body; one written back.

Where things are: `events(body)` yields an `EventSpan` per event (its lines and
their own terminators); `data(span)` joins its data as the SSE spec does;
`rebuild(span, data, other)` writes it back with one `data:` line, so an event
nothing changed comes back byte for byte. Not the SDK's `_sse` reader:
redaction (`_redact.py`) needs byte spans, not events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["EventSpan", "data", "events", "rebuild"]

_TERMINATOR = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class EventSpan:
    """One event of a body: `body[start:end]` is its lines, terminators included."""

    start: int
    end: int
    lines: tuple[tuple[bytes, bytes], ...]  # (line, its terminator)


def events(body: bytes) -> Iterator[EventSpan]:
    """Every event of `body`, in order (see the module docstring)."""
    lines: list[tuple[bytes, bytes]] = []
    start = position = 0
    for match in _TERMINATOR.finditer(body):
        line = body[position : match.start()]
        if line:
            if not lines:
                start = position
            lines.append((line, match.group()))
        elif lines:
            yield EventSpan(start, position, tuple(lines))
            lines = []
        position = match.end()
    if position < len(body):
        if not lines:
            start = position
        lines.append((body[position:], b""))
    if lines:
        yield EventSpan(start, len(body), tuple(lines))


def _field(line: bytes) -> tuple[bytes, bytes]:
    name, colon, value = line.partition(b":")
    if colon and value.startswith(b" "):
        value = value[1:]
    return name, value


def data(span: EventSpan) -> bytes | None:
    """The event's data (its `data` lines' values joined by newlines), or None if it has none."""
    values = [
        value for name, value in map(_field, (line for line, _ in span.lines)) if name == b"data"
    ]
    return b"\n".join(values) if values else None


def rebuild(span: EventSpan, new_data: bytes | None, other: Callable[[bytes], bytes]) -> bytes:
    """The event with `new_data` as its data (None: its data lines as they were), and
    every other line passed through `other`."""
    out: list[bytes] = []
    written = False
    for line, terminator in span.lines:
        name, _ = _field(line)
        if name == b"data" and new_data is not None:
            if not written:
                spaced = line.startswith(b"data: ")
                out += [b"data: " if spaced else b"data:", new_data, terminator]
                written = True
        elif name == b"data":
            out += [line, terminator]
        else:
            out += [other(line), terminator]
    return b"".join(out)
