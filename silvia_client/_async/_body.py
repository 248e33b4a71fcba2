"""Reading a response body in pieces of bounded size, counted, and stopped on cue.

gzip and deflate are decoded here (`Inflater`), at most `DEFAULTS.piece_bytes` out at
a time: httpx's own decoder turns one read into whatever it inflates to (a gzip bomb:
64 MiB at once). `guarded` raises `Halt` past a byte limit or once the guard is
stopped. `drain`, after a stream's `done`, reads the rest of its body within
`DEFAULTS.drain_bytes` and `.drain_seconds`: the connection goes back to the pool.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import AsyncGenerator, AsyncIterable, Iterator

import httpx

from .._deadline import Guard, Halt
from .._wire import DEFAULTS
from ._backend import drain_scope


class Inflater:
    """gzip or deflate (zlib-wrapped or raw, as httpx reads it), out in bounded pieces."""

    __slots__ = ("_decoder", "_raw_fallback")

    def __init__(self, encoding: str) -> None:
        gzip = encoding in ("gzip", "x-gzip")
        self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)
        self._raw_fallback = not gzip

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._decoder.decompress(data, DEFAULTS.piece_bytes)
            except zlib.error as error:
                if not self._raw_fallback:
                    raise httpx.DecodingError(str(error)) from error
                # Some servers send raw deflate under "deflate": try that, on the first bytes.
                self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                self._raw_fallback = False
                continue
            self._raw_fallback = False
            if out:
                yield out
            data = self._decoder.unconsumed_tail

    def flush(self) -> bytes:
        try:
            return self._decoder.flush()
        except zlib.error as error:
            raise httpx.DecodingError(str(error)) from error


def inflater_for(header: str) -> Inflater | None:
    """The decoder a Content-Encoding needs (None: none), or a `DecodingError` if we cannot."""
    codings = [c for c in header.lower().replace(" ", "").split(",") if c not in ("", "identity")]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return Inflater(codings[0])
    raise httpx.DecodingError(
        f"the Content-Encoding {header[:40]!r} is not one the SDK decodes "
        f"(it asks for {DEFAULTS.accept_encoding!r}, one at a time)"
    )


def encoding_error(response: httpx.Response) -> str | None:
    """Why the body's Content-Encoding cannot be decoded here (`br`, `zstd`, stacked)."""
    header = response.headers.get("content-encoding")
    if header is not None:
        try:
            inflater_for(header)
        except httpx.DecodingError as error:
            return str(error)
    return None


_UNBOUNDED = 2**62  # for a reader that stops itself


async def _content(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """A body already read (by a caller's transport or event hook), whole."""
    try:
        content = response.content
    except httpx.ResponseNotRead:  # consumed, not kept: nothing left to read
        return
    if content:
        yield content


async def _inflated(raw: AsyncIterable[bytes], inflater: Inflater) -> AsyncGenerator[bytes, None]:
    try:
        async for data in raw:
            for piece in inflater.feed(data):
                yield piece
        if last := inflater.flush():
            yield last
    finally:  # closing a generator early does not close the one it reads from
        if isinstance(raw, AsyncGenerator):
            await raw.aclose()


def body_chunks(response: httpx.Response) -> AsyncIterable[bytes]:
    """The decoded body of `response`, in pieces of at most `piece_bytes` when decoded here
    (`httpx.DecodingError`, before any is read, for an encoding the SDK does not decode);
    a body read already is as httpx decoded it."""
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
                raise Halt(None, limit) if total > limit else Halt(guard.reason)
            yield chunk
    finally:  # as `_inflated`'s
        if isinstance(chunks, AsyncGenerator):
            await chunks.aclose()


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
        await chunks.aclose()
        await response.aclose()
    return bytes(data[:limit])


async def drain(rest: AsyncIterable[bytes], guard: Guard) -> None:
    """Read the `rest` of a body, which `guard` watches, within the drain's bounds."""
    guard.arm(time.monotonic() + DEFAULTS.drain_seconds, "drained")
    with drain_scope(DEFAULTS.drain_seconds):
        try:
            async for _ in guarded(rest, guard, DEFAULTS.drain_bytes):
                pass
        except (httpx.TransportError, httpx.DecodingError, Halt):
            pass  # the connection is closed, as it would have been without the drain
