"""A body's Content-Encoding (`_async/_body.py`): what is decoded, in bounded pieces, and what is
refused, by name. Compared with zlib's own one-shot decoding."""

from __future__ import annotations

import gzip
import os
import zlib

import httpx
import pytest

from silvia_client._async._body import content_pieces, encoding_error, inflater_for
from silvia_client._wire import DEFAULTS

DATA = os.urandom(64) * (DEFAULTS.piece_bytes // 16)  # squeezes well, opens past one piece


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


def _inflated(header: str, body: bytes, chunk: int = 1000) -> bytes:
    inflater = inflater_for(header)
    assert inflater is not None, header
    out = []
    for start in range(0, len(body), chunk):
        for piece in inflater.feed(body[start : start + chunk]):
            assert len(piece) <= DEFAULTS.piece_bytes, header
            out.append(piece)
    return b"".join(out) + inflater.flush()


def test_each_encoding_the_sdk_asks_for_is_decoded_however_the_header_spells_it() -> None:
    bodies = {
        "gzip": gzip.compress(DATA),
        "deflate": _deflate(DATA, zlib.MAX_WBITS),  # zlib-wrapped, as the RFC says
    }
    spellings = {
        "gzip": ["gzip", "x-gzip", "X-GZip", " gzip ", "identity, gzip", "gzip,identity", "gzip,"],
        "deflate": ["deflate", "Deflate", "deflate , identity"],
    }
    for coding, headers in spellings.items():
        for header in headers:
            assert _inflated(header, bodies[coding]) == DATA, header
            assert encoding_error(httpx.Response(200, headers={"content-encoding": header})) is None
    # Raw deflate under "deflate", as some servers send it; never under gzip.
    raw = _deflate(DATA, -zlib.MAX_WBITS)
    assert _inflated("deflate", raw) == DATA
    with pytest.raises(httpx.DecodingError):
        _inflated("x-gzip", raw)


def test_a_deflate_body_that_breaks_after_it_began_is_an_error_not_a_second_guess() -> None:
    body = bytearray(_deflate(DATA, zlib.MAX_WBITS))
    body[len(body) // 2 :] = os.urandom(len(body) - len(body) // 2)
    with pytest.raises(httpx.DecodingError):
        _inflated("deflate", bytes(body), chunk=len(body) // 4)


def test_no_coding_is_none_and_what_the_sdk_cannot_decode_is_named() -> None:
    for header in ("", "identity", " Identity ", "identity, ,identity"):
        assert inflater_for(header) is None, header
    long = "br, " + "x" * 60
    for header in ("br", "zstd", "gzip, gzip", "gzip, deflate", "gzip deflate", long):
        with pytest.raises(httpx.DecodingError) as caught:
            inflater_for(header)
        message = str(caught.value)
        assert f"the Content-Encoding {header[:40]!r} is not one the SDK decodes" in message
        assert f"(it asks for {DEFAULTS.accept_encoding!r}, one at a time)" in message
        response = httpx.Response(200, headers={"Content-Encoding": header})
        assert encoding_error(response) == message, header


def test_a_body_that_is_not_what_its_header_says_fails_with_zlibs_words() -> None:
    for header in ("gzip", "deflate"):
        with pytest.raises(httpx.DecodingError, match="while decompressing data"):
            _inflated(header, b"this is not compressed at all")


def test_a_body_read_already_is_handed_on_whole() -> None:
    assert list(content_pieces(httpx.Response(200, content=b"read"))) == [b"read"]
    assert list(content_pieces(httpx.Response(200, content=b""))) == []
    streamed = httpx.Response(200, stream=httpx.ByteStream(b"unread"))
    assert list(content_pieces(streamed)) == []  # not read, so not kept: nothing to hand on
