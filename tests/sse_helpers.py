"""How the tests drive the one SSE decoder (`silvia_client._sse.SSEDecoder`).

The SDK feeds it from one loop (`_async/_stream.py`), sync and async alike; the
tests feed it chunk lists, so that small loop lives here, not in the package.
"""

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
