"""Body reading (`_async/_body.py`): bounded, guarded, decoded, and what each reader hands
back when a body ends early; the Content-Encodings decoded, in bounded pieces, and those
refused, by name; after `done`, the drain that hands the connection back to the pool (a
server on 127.0.0.1 tells which connection each request came on by its client port).
"""

from __future__ import annotations

import gc
import random
import warnings
import zlib
from collections.abc import AsyncIterator
from functools import partial

import anyio
import httpx
import pytest

from silvia_client._async._body import (
    Inflater,
    _inflated,
    drain,
    encoding_error,
    guarded,
    inflater_for,
    read_at_most,
    read_body,
)
from silvia_client._deadline import Guard, Halt
from silvia_client._sync._body import _content
from silvia_client._wire import DEFAULTS

from ..hostile import SSE, Connection, HostileServer, Request, chunk, head, response
from .conftest import Api, no_alarm
from .sse import Body, comment, compressed, done, session, text
from .test_deadline import ends

pytestmark = pytest.mark.anyio


def _response(
    chunks: list[bytes], error: Exception | None = None, encoding: str | None = None
) -> httpx.Response:
    headers = {} if encoding is None else {"content-encoding": encoding}
    return httpx.Response(200, headers=headers, stream=Body(chunks, fail=error))


async def test_a_body_is_read_whole_decoded_and_within_its_limit() -> None:
    plain = await read_body(_response([b"ab", b"cd"]), Guard(no_alarm), 4)
    assert plain == b"abcd"  # exactly the limit is allowed
    zipped = compressed(b"x" * 100)
    body = _response([zipped[:10], zipped[10:]], encoding="gzip")
    assert await read_body(body, Guard(no_alarm), 100) == b"x" * 100
    with pytest.raises(Halt) as halted:
        await read_body(_response([b"ab", b"cde"]), Guard(no_alarm), 4)
    assert (halted.value.limit, halted.value.reason) == (4, None)
    read = httpx.Response(200, content=b"read already")
    assert await read_body(read, Guard(no_alarm), 100) == b"read already"
    stopped = Guard(no_alarm)
    stopped.stop("closed")
    with pytest.raises(Halt) as halted:  # at the limit exactly, the stop is what is said
        await read_body(_response([b"ab"]), stopped, 2)
    assert (halted.value.limit, halted.value.reason) == (None, "closed")


async def test_read_at_most_keeps_the_first_bytes_and_what_came_before_a_break() -> None:
    response = _response([b"abc", b"def", b"ghi"])
    assert await read_at_most(response, 5, Guard(no_alarm)) == b"abcde"
    assert response.is_closed
    broken = _response([b"abc"], httpx.ReadError("gone"))
    assert await read_at_most(broken, 100, Guard(no_alarm)) == b"abc"
    undecodable = _response([b"not gzip"], encoding="gzip")
    assert await read_at_most(undecodable, 100, Guard(no_alarm)) == b""
    # A body read already is handed on whole; one not read is not kept: nothing to hand on.
    assert list(_content(httpx.Response(200, content=b"read"))) == [b"read"]
    assert list(_content(httpx.Response(200, content=b""))) == []
    assert list(_content(httpx.Response(200, stream=httpx.ByteStream(b"unread")))) == []


async def test_drain_and_guarded_read_to_their_bound_and_close_what_they_leave() -> None:
    seen: list[bytes] = []
    closed: list[str] = []

    async def source(
        name: str, chunks: list[bytes], error: Exception | None = None
    ) -> AsyncIterator[bytes]:
        try:
            for piece in chunks:
                seen.append(piece)
                yield piece
            if error is not None:
                raise error
        finally:
            closed.append(name)

    # The drain reads the rest and swallows how it ends, up to `drain_bytes`.
    await drain(source("rest", [b"a", b"b"]), Guard(no_alarm))
    assert seen == [b"a", b"b"]
    await drain(source("broken", [b"c"], httpx.ReadError("gone")), Guard(no_alarm))
    too_long = [b"x" * DEFAULTS.drain_bytes, b"y", b"never"]
    await drain(source("long", too_long), Guard(no_alarm))  # past `drain_bytes`: it stops there
    assert seen[-1] == b"y"
    # `guarded` counts every chunk; a reader closed early closes its source.
    counted = guarded(source("counted", [b"ab", b"cd", b"e"]), Guard(no_alarm), 4)
    assert [await counted.__anext__(), await counted.__anext__()] == [b"ab", b"cd"]
    with pytest.raises(Halt):
        await counted.__anext__()
    reading = guarded(source("guarded", [b"a", b"b"]), Guard(no_alarm), 10)
    assert await reading.__anext__() == b"a"
    await reading.aclose()
    zipped = compressed(b"x" * 100)
    inflating = _inflated(source("inflated", [zipped[:20], zipped[20:]]), Inflater("gzip"))
    await inflating.__anext__()
    await inflating.aclose()
    assert closed[-2:] == ["guarded", "inflated"]


class _Plain(httpx.AsyncByteStream):
    """A body whose async iterator is no generator: what is left unfinished is the SDK's."""

    def __init__(self) -> None:
        self.items = [b"abc", b"def", b"ghi"]

    def __aiter__(self) -> _Plain:
        return self

    async def __anext__(self) -> bytes:
        if not self.items:
            raise StopAsyncIteration
        return self.items.pop(0)


def test_read_at_most_leaves_no_reader_unfinished_under_trio() -> None:
    async def main() -> None:
        response = httpx.Response(200, stream=_Plain())
        assert await read_at_most(response, 2, Guard(no_alarm)) == b"ab"
        gc.collect()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        anyio.run(main, backend="trio")  # trio warns of an async generator collected unfinished
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


# ------------------------------------------------------------------------ Content-Encoding


# Fixed bytes (a seeded generator), so that every run compresses and corrupts them alike.
DATA = random.Random(8).randbytes(64) * (DEFAULTS.piece_bytes // 16)  # opens past one piece


def decoded(header: str, body: bytes, chunk: int = 1000) -> bytes:
    inflater = inflater_for(header)
    assert inflater is not None, header
    out = []
    for start in range(0, len(body), chunk):
        for piece in inflater.feed(body[start : start + chunk]):
            assert len(piece) <= DEFAULTS.piece_bytes, header
            out.append(piece)
    return b"".join(out) + inflater.flush()


def test_each_coding_the_sdk_asks_for_is_decoded_however_spelled_and_a_bad_body_refused() -> None:
    bodies = {
        "gzip": compressed(DATA),
        "deflate": compressed(DATA, zlib.MAX_WBITS),  # zlib-wrapped, as the RFC says
    }
    spellings = {
        "gzip": ["gzip", "x-gzip", "X-GZip", " gzip ", "identity, gzip", "gzip,identity", "gzip,"],
        "deflate": ["deflate", "Deflate", "deflate , identity"],
    }
    for coding, headers in spellings.items():
        for header in headers:
            assert decoded(header, bodies[coding]) == DATA, header
            assert encoding_error(httpx.Response(200, headers={"content-encoding": header})) is None
    # Raw deflate under "deflate", as some servers send it; never under gzip.
    raw = compressed(DATA, -zlib.MAX_WBITS)
    assert decoded("deflate", raw) == DATA
    with pytest.raises(httpx.DecodingError):
        decoded("x-gzip", raw)
    # A body that is not what its header says fails with zlib's words.
    for header in ("gzip", "deflate"):
        with pytest.raises(httpx.DecodingError, match="while decompressing data"):
            decoded(header, b"this is not compressed at all")
    # A deflate body that breaks after it began is an error, not a second guess (raw).
    broken = bytearray(bodies["deflate"])
    # Random bytes break a deflate stream about 99 times in 100, and these do.
    broken[len(broken) // 2 :] = random.Random(29).randbytes(len(broken) - len(broken) // 2)
    with pytest.raises(httpx.DecodingError):
        decoded("deflate", bytes(broken), chunk=len(broken) // 4)


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


# ------------------------------------------------------------- the connection, back to the pool


class App:
    """A turn (`after` says what follows its `done`) and a session, each request's client
    port noted: which connection it came on."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.after = "end"

    def __call__(self, request: Request, connection: Connection) -> None:
        self.ports.append(connection.sock.getpeername()[1])
        if request.method == "GET":
            history = b'{"session": {"id": "s1", "title": "t"}, "messages": []}'
            connection.send(response(200, history, {"content-type": "application/json"}))
            return
        turn = head(200, SSE, chunked=True) + chunk(session("s1") + text("Hello") + done())
        if not connection.send(turn):
            return
        if self.after == "hang":  # the body never ends
            connection.wait_for_close(60)
            return
        if self.after == "chatter":  # far more than the drain reads, then the end
            for _ in range(64):
                if not connection.send(chunk(comment("x" * 16_384))):
                    return
        connection.send(chunk(b""))


async def test_after_done_the_connection_is_used_again_unless_the_body_goes_on(api: Api) -> None:
    app = App()
    with HostileServer(app) as hostile:
        client = api.client(base_url=hostile.url, token="t")
        for _ in range(3):
            assert (await ends(api, partial(api.turn, client))).complete
        await api.session(client, "s1")
        assert len(app.ports) == 4
        assert len(set(app.ports)) == 1, app.ports  # one connection for all four
        # A body that never ends; 1 MiB of comments after `done`; then one that ends.
        for after in ("hang", "chatter", "end"):
            app.after = after
            assert (await ends(api, partial(api.turn, client))).complete, after  # the drain's bound
        assert len(set(app.ports)) == 3  # and closed the connection each time
