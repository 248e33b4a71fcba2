"""Reading a response body in pieces of bounded size, counted, and stopped on cue.

* `body_chunks(response)`: the decoded body (`_body.py` decodes, without I/O).
* `guarded(chunks, guard, limit)`: those pieces, raising `Halt` past `limit`
  bytes or once the guard is stopped (`_deadline.py`), checked between chunks on
  every transport. Closing it closes `chunks`.
* `read_body`: a whole body within those bounds; `read_at_most`: the start of an
  error body, for its message.
* `drain`: after a stream's `done`, the rest of its body, within
  `DEFAULTS.drain_bytes` and `.drain_seconds` (`_backend.drain_bound`: async, a
  cancel scope; sync, the guard's alarm, which shuts its socket down, and is
  checked between chunks on a transport without one), so that the connection
  goes back to the pool, and every iterator over the body ends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator

import httpx

from .._body import Inflater, content_pieces, inflater_for
from .._deadline import Guard, Halt
from .._wire import DEFAULTS
from ._backend import close_chunks, drain_bound

__all__ = ["body_chunks", "drain", "guarded", "read_at_most", "read_body"]

_UNBOUNDED = 2**62  # for a reader that stops itself


async def _content(response: httpx.Response) -> AsyncIterator[bytes]:
    for piece in content_pieces(response):
        yield piece


async def _inflated(raw: AsyncIterable[bytes], inflater: Inflater) -> AsyncIterator[bytes]:
    try:
        async for data in raw:
            for piece in inflater.feed(data):
                yield piece
        if last := inflater.flush():
            yield last
    finally:
        await close_chunks(raw)


def body_chunks(response: httpx.Response) -> AsyncIterable[bytes]:
    """The decoded body of `response`, in pieces of at most `piece_bytes` when decoded here."""
    if response.is_stream_consumed:
        return _content(response)
    header = response.headers.get("content-encoding")
    inflater = None if header is None else inflater_for(header)
    if inflater is None:
        return response.aiter_raw()
    return _inflated(response.aiter_raw(), inflater)


async def guarded(
    chunks: AsyncIterable[bytes], guard: Guard, limit: int
) -> AsyncGenerator[bytes, None]:
    """`chunks`, raising `Halt` past `limit` bytes in all or once `guard` is stopped."""
    total = 0
    try:
        async for chunk in chunks:
            total += len(chunk)
            if total > limit or guard.reason is not None:
                raise Halt(None, limit) if total > limit else guard.halt()
            yield chunk
    finally:
        await close_chunks(chunks)


async def read_body(response: httpx.Response, guard: Guard, limit: int) -> bytes:
    """The whole decoded body, at most `limit` bytes (else `Halt`); transport errors propagate."""
    return b"".join([chunk async for chunk in guarded(body_chunks(response), guard, limit)])


async def read_at_most(response: httpx.Response, limit: int, guard: Guard) -> bytes:
    """The first `limit` bytes of the body, or what arrived before it broke; closes `response`."""
    data = bytearray()
    chunks = guarded(body_chunks(response), guard, _UNBOUNDED)
    try:
        async for chunk in chunks:
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.TransportError, httpx.DecodingError, Halt):
        pass  # what arrived is enough to describe the error
    finally:
        await close_chunks(chunks)
        await response.aclose()
    return bytes(data[:limit])


async def drain(rest: AsyncIterable[bytes], guard: Guard) -> None:
    """Read the `rest` of a body, which `guard` watches, within the drain's bounds."""
    with drain_bound(guard):
        try:
            async for _ in guarded(rest, guard, DEFAULTS.drain_bytes):
                pass
        except (httpx.TransportError, httpx.DecodingError, Halt):
            pass  # the connection is closed, as it would have been without the drain
