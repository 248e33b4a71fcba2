"""The ways the tests drive the one SSE decoder (`silvia_client._sse.SSEDecoder`).

The SDK feeds it from one loop (`_async/_stream.py`); the tests feed it whole
bodies, chunk lists and async sources, so these small loops live here, not in
the package.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator

from httpx_sse import ServerSentEvent

from silvia_client._sse import EventTooLarge, SSEDecoder

__all__ = [
    "EventTooLarge",
    "SSEFields",
    "SSEParser",
    "aiter_sse",
    "aiter_sse_fields",
    "iter_sse",
    "iter_sse_fields",
]

SSEFields = tuple[str, str, str, "int | None"]  # event, data, id, retry


def fields(event: ServerSentEvent) -> SSEFields:
    return (event.event, event.data, event.id, event.retry)


class SSEParser(SSEDecoder):
    """The decoder, with its events also as `(event, data, id, retry)` tuples."""

    def feed_fields(self, chunk: bytes) -> list[SSEFields]:
        return [fields(event) for event in self.feed(chunk)]

    def close_fields(self) -> list[SSEFields]:
        return [fields(event) for event in self.close()]


def iter_sse(
    chunks: Iterable[bytes], *, max_event_bytes: int | None = None
) -> Iterator[ServerSentEvent]:
    decoder = SSEDecoder(max_event_bytes)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.close()


def iter_sse_fields(
    chunks: Iterable[bytes], *, max_event_bytes: int | None = None
) -> Iterator[SSEFields]:
    return (fields(event) for event in iter_sse(chunks, max_event_bytes=max_event_bytes))


async def aiter_sse(
    chunks: AsyncIterable[bytes], *, max_event_bytes: int | None = None
) -> AsyncIterator[ServerSentEvent]:
    decoder = SSEDecoder(max_event_bytes)
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event


async def aiter_sse_fields(
    chunks: AsyncIterable[bytes], *, max_event_bytes: int | None = None
) -> AsyncIterator[SSEFields]:
    async for event in aiter_sse(chunks, max_event_bytes=max_event_bytes):
        yield fields(event)
