"""Bytes of a `text/event-stream` body in, `httpx_sse.ServerSentEvent`s out.

httpx-sse parses lines and fields well, but its `EventSource` departs from the
WHATWG event-stream rules in ways a client reading a long chat stream notices:

* it decodes with `response.iter_text()`, so the body is read in whatever
  charset the Content-Type header names; the spec says always UTF-8;
* it keeps a leading byte-order mark, which then sticks to the first field
  name (`"\\ufeffevent"`), so the first event loses its type;
* it dispatches an event with empty data on a blank line whenever `event`,
  `retry` or a once-set `id` is pending, where the spec dispatches only if at
  least one `data` line came since the last dispatch. After any `id:`, every
  keep-alive comment followed by a blank line becomes a phantom event.

This module adds those three rules on top of httpx-sse. Its line splitter
(`SSELineDecoder`: CR, LF, CRLF, also across chunks) is used as it is, but for
the common chunk that needs none of its care (no CR, ends with a line, nothing
held back from the previous chunk), which is split here the same way; its
events are `httpx_sse.ServerSentEvent`s. The fields of a line are read here,
by the rules of httpx-sse's `SSEDecoder` (how `id` and `retry` are read is
theirs) plus the dispatch rule above, in one loop over a chunk's lines rather
than a method call per line. On a stream of small chat events, those per-line
and per-chunk costs are most of the parsing. An event not ended by a blank
line at end of stream is dropped, as the spec says and httpx-sse does too.

`iter_sse_fields` / `aiter_sse_fields` give each event as a plain
`(event, data, id, retry)` tuple, for the chat stream, which reads only the
first two; `iter_sse` / `aiter_sse` give `ServerSentEvent`s.
"""

from __future__ import annotations

from codecs import BOM_UTF8, utf_8_decode
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeAlias

from httpx_sse import ServerSentEvent

# Not exported by httpx-sse (0.4.x); `EventSource` is built on it.
from httpx_sse._decoders import SSELineDecoder

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterable, Generator, Iterable

__all__ = ["SSEFields", "SSEParser", "aiter_sse", "aiter_sse_fields", "iter_sse", "iter_sse_fields"]

SSEFields: TypeAlias = "tuple[str, str, str, int | None]"
"""One event: its type (`"message"` when none was given), data, last event id, retry."""


class SSEParser:
    """Incremental event-stream parser: feed it byte chunks, get finished events.

    Pure (no I/O). Chunks may be cut anywhere, including inside a UTF-8
    character or between the CR and LF of a CRLF.
    """

    __slots__ = (
        "_at_start",
        "_data",
        "_event",
        "_last_id",
        "_line_ended",
        "_lines",
        "_pending",
        "_retry",
    )

    def __init__(self) -> None:
        # Bytes not decoded yet: the start of a UTF-8 character cut by the chunk,
        # or, before the first three bytes are in, what may be a byte-order mark.
        self._pending = b""
        self._at_start = True
        self._lines = SSELineDecoder()
        # Whether the last text given to `_lines` ended with LF, which leaves it
        # holding nothing (no partial line, no CR that might start a CRLF).
        self._line_ended = True
        # The event being read: its type, its data lines (an event is dispatched
        # only if it has one), and the id and retry as httpx-sse keeps them (the
        # last id stays for later events; retry is per event).
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Take the next chunk of the body; return the events it completes."""
        return [ServerSentEvent(*fields) for fields in self.feed_fields(chunk)]

    def close(self) -> list[ServerSentEvent]:
        """Signal end of input; return the events only now known to be complete.

        That is normally none: the one case is a body whose last byte is the CR
        of a blank line, which could not be told from half a CRLF until now.
        """
        return [ServerSentEvent(*fields) for fields in self.close_fields()]

    def feed_fields(self, chunk: bytes) -> list[SSEFields]:
        """`feed`, giving each event as an `(event, data, id, retry)` tuple."""
        text = self._decode(chunk)
        return self._scan(self._split(text)) if text else []

    def close_fields(self) -> list[SSEFields]:
        """`close`, giving each event as an `(event, data, id, retry)` tuple."""
        # Bytes still pending are part of one character: they cannot end a line,
        # so nothing they belong to can be dispatched. The line decoder may hold
        # an unterminated line (likewise never dispatched) or a final CR it kept
        # back in case an LF followed; that CR does end a line, maybe the blank
        # one that dispatches.
        return self._scan(self._lines.flush())

    def _decode(self, chunk: bytes) -> str:
        # Always UTF-8, invalid bytes replaced, one leading BOM dropped: what the
        # stdlib's incremental "utf-8-sig" decoder does, without its two Python
        # calls per chunk.
        data = self._pending + chunk if self._pending else chunk
        if self._at_start:
            if len(data) < 3 and BOM_UTF8.startswith(data):
                self._pending = data  # too short to tell a BOM yet
                return ""
            self._at_start = False
            if data.startswith(BOM_UTF8):
                data = data[3:]
        text, used = utf_8_decode(data, "replace", False)
        self._pending = data[used:]
        return text

    def _split(self, text: str) -> list[str]:
        # `SSELineDecoder.decode`, whose result this is in every case; the common
        # one, a chunk of whole LF-ended lines after a chunk that ended a line, is
        # split here without its per-chunk bookkeeping.
        if self._line_ended and text[-1] == "\n" and "\r" not in text:
            lines = text.split("\n")
            lines.pop()
            return lines
        self._line_ended = text[-1] == "\n"
        return self._lines.decode(text)

    def _scan(self, lines: list[str]) -> list[SSEFields]:
        out: list[SSEFields] = []
        event, data, last_id, retry = self._event, self._data, self._last_id, self._retry
        for line in lines:
            if not line:
                # A blank line dispatches the event, if a `data` line came.
                if data:
                    out.append(
                        (
                            event or "message",
                            data[0] if len(data) == 1 else "\n".join(data),
                            last_id,
                            retry,
                        )
                    )
                    data = []
                event = ""
                retry = None
            elif line.startswith("data: "):  # the two lines of nearly every event
                data.append(line[6:])
            elif line.startswith("event: "):
                event = line[7:]
            else:
                # `name: value`, `name:value`, or a bare `name` (empty value); a
                # line starting with a colon is a comment (empty name, ignored).
                name, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
                elif name == "id":
                    if "\0" not in value:
                        last_id = value
                elif name == "retry":
                    with suppress(ValueError):  # httpx-sse's rule: what `int` reads
                        retry = int(value)
        self._event, self._data, self._last_id, self._retry = event, data, last_id, retry
        return out


def iter_sse_fields(chunks: Iterable[bytes]) -> Generator[SSEFields, None, None]:
    """Events of an event-stream body given as byte chunks, as `(event, data, id, retry)`.

    Errors raised by `chunks` propagate unchanged.
    """
    # `SSEParser.feed_fields` and `close_fields`, inlined, with the parser's state
    # in local variables: a server writes each event on its own, and an HTTP
    # client yields each write as a chunk, so this runs once per event. The
    # tests check both paths give the same events for any body cut anywhere.
    pending = b""
    at_start = True
    line_decoder = SSELineDecoder()
    line_ended = True
    event = last_id = ""
    data: list[str] = []
    retry: int | None = None
    for chunk in chunks:
        if pending:
            chunk = pending + chunk
        if at_start:
            if len(chunk) < 3 and BOM_UTF8.startswith(chunk):
                pending = chunk
                continue
            at_start = False
            if chunk.startswith(BOM_UTF8):
                chunk = chunk[3:]
        try:
            # A chunk of whole, valid UTF-8 (nearly all of them) decodes the same
            # either way; `bytes.decode` is just the quicker call.
            text = chunk.decode()
            pending = b""
        except UnicodeDecodeError:
            text, used = utf_8_decode(chunk, "replace", False)
            pending = chunk[used:]
        if not text:
            continue
        if line_ended and text[-1] == "\n" and "\r" not in text:
            lines = text.split("\n")
            lines.pop()
        else:
            line_ended = text[-1] == "\n"
            lines = line_decoder.decode(text)
        for line in lines:
            if not line:
                if data:
                    yield (
                        event or "message",
                        data[0] if len(data) == 1 else "\n".join(data),
                        last_id,
                        retry,
                    )
                    data = []
                event = ""
                retry = None
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line.startswith("event: "):
                event = line[7:]
            else:
                name, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
                elif name == "id":
                    if "\0" not in value:
                        last_id = value
                elif name == "retry":
                    with suppress(ValueError):
                        retry = int(value)
    # End of body: only a final CR the line decoder held back can still end a
    # line (see `SSEParser.close_fields`).
    if line_decoder.flush() == [""] and data:
        yield (event or "message", data[0] if len(data) == 1 else "\n".join(data), last_id, retry)


def iter_sse(chunks: Iterable[bytes]) -> Generator[ServerSentEvent, None, None]:
    """Events of an event-stream body given as byte chunks, e.g. `response.iter_bytes()`.

    Errors raised by `chunks` propagate unchanged.
    """
    for fields in iter_sse_fields(chunks):
        yield ServerSentEvent(*fields)


async def aiter_sse_fields(
    chunks: AsyncIterable[bytes],
) -> AsyncGenerator[SSEFields, None]:
    """Async twin of `iter_sse_fields`, e.g. over `response.aiter_bytes()`.

    Closing this generator early also closes the chunk iterator it took, so the
    response's byte stream is not left to the garbage collector (which, for an
    async generator, happens on some later event-loop turn, or never).
    """
    source = chunks.__aiter__()
    parser = SSEParser()
    decode, split, scan = parser._decode, parser._split, parser._scan
    try:
        async for chunk in source:
            text = decode(chunk)
            if text:
                for fields in scan(split(text)):
                    yield fields
        for fields in parser.close_fields():
            yield fields
    finally:
        aclose: Any = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncGenerator[ServerSentEvent, None]:
    """Async twin of `iter_sse`, e.g. over `response.aiter_bytes()`.

    Closing this generator early also closes the chunk iterator it took (see
    `aiter_sse_fields`).
    """
    fields_of = aiter_sse_fields(chunks)
    try:
        async for fields in fields_of:
            yield ServerSentEvent(*fields)
    finally:
        await fields_of.aclose()
