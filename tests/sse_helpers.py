"""How the tests drive the SSE decoder (`_sse.SSEDecoder`): chunk lists, fed as the
stream's loop (`_async/_stream.py`) feeds it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from httpx_sse import ServerSentEvent

from silvia_client._sse import SSEDecoder


def iter_sse(
    chunks: Iterable[bytes], *, max_event_bytes: int | None = None
) -> Iterator[ServerSentEvent]:
    """The events of `chunks`, as the stream's loop reads them: each chunk fed, then close."""
    decoder = SSEDecoder(max_event_bytes)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.close()
