"""A gzip body written in pieces, with a bomb in it that costs the server next to nothing.

Where things are: `GzipBody` compresses each piece on its own (a raw deflate
stream ended by a sync flush), so one compressed segment can be sent again and
again (`padding`); the CRC-32 over all copies comes from one copy's
(`_crc32_repeated`, zlib's `crc32_combine` arithmetic), never by reading gigabytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["GzipBody", "Padding", "crc32_combine"]

_POLY = 0xEDB88320  # CRC-32's polynomial, reflected
# The padding compressed once: deflate gives about 1 KiB out per MiB in at best.
_UNIT = 1024 * 1024
_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # no name, no time, best compression


def _multmodp(a: int, b: int) -> int:
    """a(x) times b(x), modulo the CRC-32 polynomial."""
    m = 1 << 31
    product = 0
    while True:
        if a & m:
            product ^= b
            if not a & (m - 1):
                return product
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _x_powers() -> tuple[int, ...]:
    powers = [1 << 30]  # x^1
    for _ in range(31):
        powers.append(_multmodp(powers[-1], powers[-1]))
    return tuple(powers)


_X2N = _x_powers()  # x^(2^k) modulo the polynomial, for k = 0..31


def _x2nmodp(n: int, k: int) -> int:
    """x^(n * 2^k), modulo the polynomial."""
    product = 1 << 31  # x^0
    while n:
        if n & 1:
            product = _multmodp(_X2N[k & 31], product)
        n >>= 1
        k += 1
    return product


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of A then B, from A's CRC, B's CRC and B's length."""
    if length2 <= 0:
        return crc1
    return _multmodp(_x2nmodp(length2, 3), crc1) ^ crc2


def _crc32_repeated(crc: int, length: int, times: int) -> int:
    """The CRC-32 of `times` copies of data whose CRC is `crc` and length `length`."""
    total = 0
    while times:
        if times & 1:
            total = crc32_combine(total, crc, length)
        crc = crc32_combine(crc, crc, length)
        length *= 2
        times >>= 1
    return total


def _compressed(data: bytes) -> bytes:
    """`data` as a raw deflate piece that refers to nothing before it and ends byte-aligned."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)


@lru_cache(maxsize=8)
def _run(line: bytes) -> tuple[bytes, int, int]:
    """A run of `line` about `_UNIT` long (one long run compresses best): its compressed
    form, its CRC-32 and its length. Kept, so a bomb per request costs no compression."""
    data = line * max(1, _UNIT // len(line))
    return _compressed(data), zlib.crc32(data), len(data)


@dataclass(frozen=True)
class Padding:
    """`segment` on the wire `times` times, then `rest` once: what a bomb sends."""

    segment: bytes
    times: int
    rest: bytes


class GzipBody:
    """One gzip member, written piece by piece; `end()` finishes it.

    Not thread-safe: one body for one response.
    """

    def __init__(self) -> None:
        self._crc = 0
        self._size = 0
        self._started = False

    def _opening(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return _HEADER

    def piece(self, data: bytes) -> bytes:
        """The bytes that carry `data` (the member's header first, the first time)."""
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        return self._opening() + (_compressed(data) if data else b"")

    def padding(self, line: bytes, total: int) -> tuple[bytes, Padding]:
        """`total` bytes of `line` again and again (the last copy cut short): what to send.

        The first value goes first (the member's header, if not sent yet); then
        the `Padding`'s `segment` `times` times, then its `rest`. Whatever
        `total` is, nothing here is bigger than `_UNIT` bytes compressed.
        """
        if not line:
            raise ValueError("padding needs at least one byte to repeat")
        segment, crc, length = _run(line)
        times, tail_length = divmod(total, length)
        if times:
            repeated = _crc32_repeated(crc, length, times)
            self._crc = crc32_combine(self._crc, repeated, length * times)
        tail = (line * (tail_length // len(line) + 1))[:tail_length]
        self._crc = zlib.crc32(tail, self._crc)
        self._size += total
        rest = _compressed(tail) if tail else b""
        return self._opening(), Padding(segment, times, rest)

    def end(self) -> bytes:
        """The last bytes: an empty final block, the CRC-32 and the length (modulo 2^32)."""
        final = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush(zlib.Z_FINISH)
        return self._opening() + final + struct.pack("<II", self._crc, self._size & 0xFFFFFFFF)
