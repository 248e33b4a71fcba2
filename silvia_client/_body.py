"""Decoding a response body in pieces of bounded size: what both sides share, without I/O.

* `inflater_for(header)`: the decoder a Content-Encoding needs. Without one the
  body is read raw. gzip and deflate are decoded here (`Inflater`), at most
  `DEFAULTS.piece_bytes` out at a time: httpx's own decoder turns one 64 KiB
  read into whatever it inflates to (a gzip bomb: 64 MiB at once). Any other
  encoding is an `httpx.DecodingError`; `encoding_error` says why, before reading.
* `content_pieces(response)`: a response already read (by a caller's transport
  or event hook) gives its content, whole.

The reading itself (`body_chunks`, `guarded`, `read_body`, `read_at_most`,
`drain`) is I/O: `_async/_body.py`, and `_sync/_body.py` generated from it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx

from ._wire import DEFAULTS

__all__ = ["Inflater", "content_pieces", "encoding_error", "inflater_for"]


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
    """Why the body's Content-Encoding cannot be decoded here (`br`, `zstd`, stacked), or None."""
    header = response.headers.get("content-encoding")
    if header is not None:
        try:
            inflater_for(header)
        except httpx.DecodingError as error:
            return str(error)
    return None


def content_pieces(response: httpx.Response) -> Iterator[bytes]:
    """A body already read (by a caller's transport or event hook): its content, whole.

    Whole: the memory is spent already, and a copy in pieces would cost time.
    """
    try:
        content = response.content
    except httpx.ResponseNotRead:  # consumed, not kept: nothing left to read
        return
    if content:
        yield content
