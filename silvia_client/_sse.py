"""Server-sent events from a body's byte chunks: the ways in to the one reader.

The reader itself, and the WHATWG rules it follows where httpx-sse's
`EventSource` does not, is `_sse_reader.read_events`. This module drives it:
`iter_sse_fields` (plain `(event, data, id, retry)` tuples) by handing it the
body's chunks, `aiter_sse_fields` and `SSEParser` by feeding it one chunk at a
time (through `_Inbox`); `iter_sse_batches`/`aiter_sse_batches` give the
reader's lists themselves, with the events in the shape of a caller's pattern
(`quick_pattern`: the chat stream reads its text events there, without
decoding their JSON); `iter_sse`/`aiter_sse` and `SSEParser.feed` give
httpx-sse's public `ServerSentEvent`s.

`max_event_bytes` (None for none) bounds a line, and an event's data, in bytes
of UTF-8: past it the reader raises `EventTooLarge`, after the events before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from httpx_sse import ServerSentEvent

from ._sse_reader import EventTooLarge, QuickFields, SSEFields, event_limit, read_events
from ._sse_runs import quick_pattern

if TYPE_CHECKING:
    import re
    from collections.abc import AsyncGenerator, AsyncIterable, Generator, Iterable, Iterator

__all__ = [
    "EventTooLarge",
    "QuickFields",
    "SSEFields",
    "SSEParser",
    "aiter_sse",
    "aiter_sse_batches",
    "aiter_sse_fields",
    "iter_sse",
    "iter_sse_batches",
    "iter_sse_fields",
    "quick_pattern",
]


class _Inbox:
    """The chunk source of a reader fed one chunk at a time: the last one put, then None."""

    __slots__ = ("chunk",)

    def __init__(self) -> None:
        self.chunk: bytes | None = None

    def __iter__(self) -> Iterator[bytes | None]:
        return self

    def __next__(self) -> bytes | None:
        chunk, self.chunk = self.chunk, None
        return chunk


class SSEParser:
    """Incremental event-stream parser: feed it byte chunks, get finished events.

    Pure (no I/O). Chunks may be cut anywhere, including inside a UTF-8
    character or between the CR and LF of a CRLF. With `max_event_bytes`, a
    line or an event's data over that many bytes raises `EventTooLarge`; the
    parser then raises it again on every later call.
    """

    __slots__ = ("_events", "_inbox", "_too_large")

    def __init__(self, max_event_bytes: int | None = None) -> None:
        self._inbox = _Inbox()
        self._events = read_events(event_limit(max_event_bytes), self._inbox)
        self._too_large: EventTooLarge | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Take the next chunk of the body; return the events it completes."""
        return [ServerSentEvent(*fields) for fields in self.feed_fields(chunk)]

    def close(self) -> list[ServerSentEvent]:
        """Signal end of input; return the events only now known to be complete."""
        return [ServerSentEvent(*fields) for fields in self.close_fields()]

    def feed_fields(self, chunk: bytes) -> list[SSEFields]:
        """`feed`, giving each event as an `(event, data, id, retry)` tuple.

        A chunk that completes events and then passes the limit returns those
        events; the next call raises `EventTooLarge`.
        """
        if self._too_large is not None:
            raise self._too_large
        self._inbox.chunk = chunk
        done: list[SSEFields] = []
        try:
            for batch in self._events:
                if batch is None:
                    break
                done += batch
        except EventTooLarge as error:
            self._too_large = error
            if not done:
                raise
        return done

    def close_fields(self) -> list[SSEFields]:
        """`close`, giving each event as an `(event, data, id, retry)` tuple.

        That is always none: every line ends as soon as its end arrives (a CR
        too), and what is left, a line without an end and the event it belongs
        to, is dropped, as the spec says.
        """
        if self._too_large is not None:
            raise self._too_large
        return []


def iter_sse_fields(
    chunks: Iterable[bytes], *, max_event_bytes: int | None = None
) -> Generator[SSEFields, None, None]:
    """Events of an event-stream body given as byte chunks, as `(event, data, id, retry)`.

    Errors raised by `chunks` propagate unchanged. With `max_event_bytes`, a
    line or an event's data over that many bytes raises `EventTooLarge`, after
    the events before it.
    """
    return _each(iter_sse_batches(chunks, None, max_event_bytes=max_event_bytes))


def _each(batches: Generator[list[SSEFields], None, None]) -> Generator[SSEFields, None, None]:
    try:
        for batch in batches:
            yield from batch
    finally:
        batches.close()


def iter_sse_batches(
    chunks: Iterable[bytes],
    quick: re.Pattern[str] | None,
    *,
    max_event_bytes: int | None = None,
) -> Generator[list[Any], None, None]:
    """`iter_sse_fields` for a reader in a hurry: the events a chunk ends, in one list.

    With `quick` None, each event is an `SSEFields` tuple; with a pattern of
    `quick_pattern`, a tuple of three, `("", name, data)`, or, where its
    shortcut read the event, `(what it read, "", "")`. A chat stream reads this
    way: its text events come straight from the shortcut.
    """
    return read_events(event_limit(max_event_bytes), chunks, quick)


def iter_sse(
    chunks: Iterable[bytes], *, max_event_bytes: int | None = None
) -> Generator[ServerSentEvent, None, None]:
    """Events of an event-stream body given as byte chunks, e.g. `response.iter_bytes()`.

    Errors raised by `chunks` propagate unchanged; `max_event_bytes` is
    `iter_sse_fields`'s.
    """
    for fields in iter_sse_fields(chunks, max_event_bytes=max_event_bytes):
        yield ServerSentEvent(*fields)


async def aiter_sse_fields(
    chunks: AsyncIterable[bytes], *, max_event_bytes: int | None = None
) -> AsyncGenerator[SSEFields, None]:
    """Async twin of `iter_sse_fields`, e.g. over `response.aiter_bytes()`.

    Closing this generator early also closes the chunk iterator it took, so the
    response's byte stream is not left to the garbage collector (which, for an
    async generator, happens on some later event-loop turn, or never).
    """
    batches = aiter_sse_batches(chunks, None, max_event_bytes=max_event_bytes)
    try:
        async for batch in batches:
            for fields in batch:
                yield fields
    finally:
        await batches.aclose()


async def aiter_sse_batches(
    chunks: AsyncIterable[bytes],
    quick: re.Pattern[str] | None,
    *,
    max_event_bytes: int | None = None,
) -> AsyncGenerator[list[Any], None]:
    """Async twin of `iter_sse_batches` (closing it closes `chunks`, as `aiter_sse_fields`)."""
    source = chunks.__aiter__()
    inbox = _Inbox()
    batches = read_events(event_limit(max_event_bytes), inbox, quick)
    try:
        async for chunk in source:
            inbox.chunk = chunk
            for batch in batches:
                if batch is None:
                    break
                yield batch
    finally:
        aclose: Any = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


async def aiter_sse(
    chunks: AsyncIterable[bytes], *, max_event_bytes: int | None = None
) -> AsyncGenerator[ServerSentEvent, None]:
    """Async twin of `iter_sse`, e.g. over `response.aiter_bytes()`.

    Closing this generator early also closes the chunk iterator it took (see
    `aiter_sse_fields`).
    """
    fields_of = aiter_sse_fields(chunks, max_event_bytes=max_event_bytes)
    try:
        async for fields in fields_of:
            yield ServerSentEvent(*fields)
    finally:
        await fields_of.aclose()
