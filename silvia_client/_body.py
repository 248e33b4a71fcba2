"""Reading a response body in pieces of bounded size, counted, and stopped on cue.

* `body_chunks(response)` / `abody_chunks`: the decoded body. Without a
  Content-Encoding it is read raw. gzip and deflate are decoded here, at most
  `DEFAULTS.piece_bytes` out at a time: httpx's own decoder turns one 64 KiB
  read into whatever it inflates to (a gzip bomb: 64 MiB at once). A response
  already read (by a caller's transport or event hook) gives its content,
  whole. Any other encoding is an `httpx.DecodingError`.
* `guarded(chunks, guard, limit)` / `aguarded`: those pieces, raising `Halt`
  past `limit` bytes or once the guard is stopped (`_deadline.py`), checked
  between chunks on every transport.
* `read_body` / `aread_body`: a whole body within those bounds;
  `read_at_most` / `aread_at_most`: the start of an error body, for its message.
* `drain` / `adrain`: after a stream's `done`, the rest of its body, within
  `DEFAULTS.drain_bytes` and `.drain_seconds`, so that the connection goes back
  to the pool. The time bound shuts the guard's socket down, so a response
  without one is not drained, but closed at once.
"""

from __future__ import annotations

import inspect
import time
import zlib
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
)

import httpx

from ._deadline import Guard, Halt
from ._wire import DEFAULTS

__all__ = [
    "abody_chunks",
    "adrain",
    "aguarded",
    "aread_at_most",
    "aread_body",
    "body_chunks",
    "drain",
    "encoding_error",
    "guarded",
    "read_at_most",
    "read_body",
]

_UNBOUNDED = 2**62  # for a reader that stops itself


class _Inflater:
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


def _inflater(header: str) -> _Inflater | None:
    """The decoder a Content-Encoding needs (None: none), or a `DecodingError` if we cannot."""
    codings = [c for c in header.lower().replace(" ", "").split(",") if c not in ("", "identity")]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return _Inflater(codings[0])
    raise httpx.DecodingError(
        f"the Content-Encoding {header[:40]!r} is not one the SDK decodes "
        f"(it asks for {DEFAULTS.accept_encoding!r}, one at a time)"
    )


def encoding_error(response: httpx.Response) -> str | None:
    """Why the body's Content-Encoding cannot be decoded here (`br`, `zstd`, stacked), or None."""
    header = response.headers.get("content-encoding")
    if header is not None:
        try:
            _inflater(header)
        except httpx.DecodingError as error:
            return str(error)
    return None


def _content(response: httpx.Response) -> Iterator[bytes]:
    # Whole: the memory is spent already, and a copy in pieces would cost time.
    try:
        content = response.content
    except httpx.ResponseNotRead:  # consumed, not kept: nothing left to read
        return
    if content:
        yield content


def _inflated(raw: Iterable[bytes], inflater: _Inflater) -> Iterator[bytes]:
    for data in raw:
        yield from inflater.feed(data)
    if last := inflater.flush():
        yield last


def body_chunks(response: httpx.Response) -> Iterable[bytes]:
    """The decoded body of `response`, in pieces of at most `piece_bytes` when decoded here."""
    if response.is_stream_consumed:
        return _content(response)
    header = response.headers.get("content-encoding")
    inflater = None if header is None else _inflater(header)
    if inflater is None:
        return response.iter_raw()
    return _inflated(response.iter_raw(), inflater)


async def _acontent(response: httpx.Response) -> AsyncIterator[bytes]:
    for piece in _content(response):
        yield piece


async def _ainflated(raw: AsyncIterable[bytes], inflater: _Inflater) -> AsyncIterator[bytes]:
    try:
        async for data in raw:
            for piece in inflater.feed(data):
                yield piece
        if last := inflater.flush():
            yield last
    finally:
        await _aclose(raw)


def abody_chunks(response: httpx.Response) -> AsyncIterable[bytes]:
    """The async twin of `body_chunks`."""
    if response.is_stream_consumed:
        return _acontent(response)
    header = response.headers.get("content-encoding")
    inflater = None if header is None else _inflater(header)
    if inflater is None:
        return response.aiter_raw()
    return _ainflated(response.aiter_raw(), inflater)


async def _aclose(iterator: AsyncIterable[bytes]) -> None:
    # Closing an async generator early does not close the one it reads from (the
    # garbage collector would, on some later turn of the loop, or never). A
    # response's own stream is the response's to close.
    if inspect.isasyncgen(iterator):
        await iterator.aclose()


def guarded(chunks: Iterable[bytes], guard: Guard, limit: int) -> Generator[bytes, None, None]:
    """`chunks`, raising `Halt` past `limit` bytes in all or once `guard` is stopped."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit or guard.reason is not None:
            raise Halt(None, limit) if total > limit else guard.halt()
        yield chunk


async def aguarded(
    chunks: AsyncIterable[bytes], guard: Guard, limit: int
) -> AsyncGenerator[bytes, None]:
    """The async twin of `guarded` (closing it closes `chunks`)."""
    total = 0
    try:
        async for chunk in chunks:
            total += len(chunk)
            if total > limit or guard.reason is not None:
                raise Halt(None, limit) if total > limit else guard.halt()
            yield chunk
    finally:
        await _aclose(chunks)


def read_body(response: httpx.Response, guard: Guard, limit: int) -> bytes:
    """The whole decoded body, at most `limit` bytes (else `Halt`); transport errors propagate."""
    return b"".join(guarded(body_chunks(response), guard, limit))


async def aread_body(response: httpx.Response, guard: Guard, limit: int) -> bytes:
    return b"".join([chunk async for chunk in aguarded(abody_chunks(response), guard, limit)])


def read_at_most(response: httpx.Response, limit: int, guard: Guard) -> bytes:
    """The first `limit` bytes of the body, or what arrived before it broke; closes `response`."""
    data = bytearray()
    chunks = guarded(body_chunks(response), guard, _UNBOUNDED)
    try:
        for chunk in chunks:
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.TransportError, httpx.DecodingError, Halt):
        pass  # what arrived is enough to describe the error
    finally:
        response.close()
    return bytes(data[:limit])


async def aread_at_most(response: httpx.Response, limit: int, guard: Guard) -> bytes:
    data = bytearray()
    chunks = aguarded(abody_chunks(response), guard, _UNBOUNDED)
    try:
        async for chunk in chunks:
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.TransportError, httpx.DecodingError, Halt):
        pass  # what arrived is enough to describe the error
    finally:
        await _aclose(chunks)
        await response.aclose()
    return bytes(data[:limit])


def drain(response: httpx.Response, rest: Iterable[bytes], guard: Guard) -> None:
    """Read the `rest` of `response`'s body, which `guard` watches, within the drain's bounds."""
    if guard.socket is None:  # no socket to shut down when the time is up
        return
    guard.arm(time.monotonic() + DEFAULTS.drain_seconds, "drained")
    try:
        for _ in guarded(rest, guard, DEFAULTS.drain_bytes):
            pass
    except (httpx.TransportError, httpx.DecodingError, Halt):
        pass  # the connection is closed, as it would have been without the drain


async def adrain(response: httpx.Response, rest: AsyncIterable[bytes], guard: Guard) -> None:
    """The async twin of `drain`."""
    if guard.socket is None:  # no socket to shut down when the time is up
        return
    guard.arm(time.monotonic() + DEFAULTS.drain_seconds, "drained")
    try:
        async for _ in aguarded(rest, guard, DEFAULTS.drain_bytes):
            pass
    except (httpx.TransportError, httpx.DecodingError, Halt):
        pass  # the connection is closed, as it would have been without the drain
