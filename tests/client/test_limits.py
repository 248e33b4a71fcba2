"""Memory: a chat stream and a history body are bounded, and a body over the bound is a typed error.

`max_response_bytes` bounds a history body and the whole of a chat stream,
counted after decompression; the read stops there, so memory stays a small
multiple of the limit whatever the server sends (measured with `tracemalloc`
on small limits, against a raw-socket server on 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient
from silvia_client.errors import (
    ResponseTooLargeError,
    SilviaError,
    StreamTooLargeError,
    UnexpectedResponseError,
)

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response
from .conftest import Api, by_case, once
from .sse import CHAT_URL, Body, done, session, sse_response, text

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024
SESSION_PATH = "/api/chat/sessions/s1"


# ------------------------------------------------------------------------------ the limit itself


async def test_a_stream_over_max_response_bytes_stops_there_with_the_partial_turn(
    api: Api, server: respx.MockRouter
) -> None:
    body = Body([session("s1"), *(text("x" * 100) for _ in range(1000)), done()])
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(body))
    _, error = await api.read(api.client(max_response_bytes=10_000))
    assert isinstance(error, StreamTooLargeError)
    assert error.limit == 10_000
    assert error.turn.session_id == "s1"
    assert 0 < len(error.turn.text) < 10_000  # what came before the limit
    assert not error.turn.complete
    assert error.request_id == "req_123"
    assert "max_response_bytes (10,000 bytes)" in str(error)
    assert body.sent < 200  # the read stopped at the limit
    assert body.closed


async def test_an_event_or_a_line_over_max_event_bytes_stops_the_stream_with_its_turn(
    api: Api, server: respx.MockRouter
) -> None:
    body = Body([session("s1"), text("Hello"), text("x" * 5000), *(text("y") for _ in range(100))])
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(body))
    events, error = await api.read(api.client(max_event_bytes=1000))
    assert isinstance(error, StreamTooLargeError)
    assert error.limit == 1000
    assert "max_event_bytes (1,000 bytes)" in str(error)
    assert error.turn.text == "Hello"  # the events before it
    assert len(events) == 2
    assert body.sent == 3  # the read stopped there
    assert body.closed
    # An endless line, against the limit given per call.
    body = Body([session("s1"), b"data: ", *(b"z" * 1000 for _ in range(100))])
    _, error = await api.read(api.client(), max_event_bytes=10_000)
    assert isinstance(error, StreamTooLargeError)
    assert error.turn.session_id == "s1"
    assert body.sent < 20


async def test_the_limit_per_call_wins_over_the_clients(api: Api, server: respx.MockRouter) -> None:
    whole = session("s1") + text("Hello" * 100) + done()
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(whole))
    client = api.client(max_response_bytes=100)
    turn = await api.turn(client, max_response_bytes=len(whole))  # a limit of exactly the body
    assert turn.complete
    _, error = await api.read(client)
    assert isinstance(error, StreamTooLargeError)


async def test_a_history_body_over_the_limit_is_response_too_large(
    api: Api, server: respx.MockRouter
) -> None:
    payload = json.dumps({"session": {"id": "s1"}, "messages": [{"content": "x" * 5000}]})
    route = server.get(SESSION_PATH).mock(
        return_value=httpx.Response(200, text=payload, headers={"x-request-id": "req_h"})
    )
    client = api.client(max_response_bytes=1000)
    with pytest.raises(ResponseTooLargeError) as caught:
        await api.session(client, "s1")
    assert caught.value.limit == 1000
    assert caught.value.request_id == "req_h"
    assert route.call_count == 1  # not retried: it would be as large again
    if isinstance(client, AsyncSilviaClient):
        await client.sessions.get("s1", max_response_bytes=len(payload))
    else:
        client.sessions.get("s1", max_response_bytes=len(payload))


# --------------------------------------------------------------------------- decoded, not raw


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9)


def deflated(data: bytes, raw: bool = False) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


async def test_compressed_bodies_are_decoded_here_and_counted_decoded(
    api: Api, server: respx.MockRouter
) -> None:
    whole = session("s1") + text("Hello") + done()
    payload = json.dumps({"session": {"id": "s1"}, "messages": []}).encode()
    encodings: list[tuple[str, Callable[[bytes], bytes]]] = [
        ("gzip", gzipped),
        ("deflate", deflated),
        ("deflate", lambda data: deflated(data, raw=True)),
    ]
    for encoding, encode in encodings:
        packed = encode(whole)
        server.post(CHAT_URL).mock(
            side_effect=lambda r, packed=packed, encoding=encoding: sse_response(
                Body([packed[:7], packed[7:]]), headers={"content-encoding": encoding}
            )
        )
        server.get(SESSION_PATH).mock(
            return_value=httpx.Response(
                200,
                stream=Body(encode(payload)),
                headers={"content-encoding": encoding, "content-type": "application/json"},
            )
        )
        client = api.client()
        assert (await api.turn(client)).complete, encode
        assert (await api.session(client, "s1")).id == "s1", encode
    # Counted after decompression: 100 kB of text in under 2 kB.
    packed = gzipped(session("s1") + text(" " * 100_000) + done())
    assert len(packed) < 2_000
    server.post(CHAT_URL).mock(
        side_effect=lambda r: sse_response(Body(packed), headers={"content-encoding": "gzip"})
    )
    _, error = await api.read(api.client(max_response_bytes=50_000))
    assert isinstance(error, StreamTooLargeError)


async def test_an_encoding_the_sdk_did_not_ask_for_is_an_unexpected_response_naming_it(
    api: Api, server: respx.MockRouter
) -> None:
    client = api.client(max_retries=0)
    for encoding in ["br", "zstd", "gzip, gzip", "compress"]:
        route = server.post(CHAT_URL).mock(
            side_effect=lambda r, encoding=encoding: sse_response(
                Body(b"\x00\x01"), headers={"content-encoding": encoding}
            )
        )
        server.get(SESSION_PATH).mock(
            return_value=httpx.Response(
                200, stream=Body(b"{}"), headers={"content-encoding": encoding}
            )
        )
        with pytest.raises(UnexpectedResponseError) as caught:
            await api.turn(client)
        assert repr(encoding) in str(caught.value)
        assert "DecodingError" not in str(caught.value)
        assert route.calls.last.request.headers["accept-encoding"] == "gzip, deflate"
        with pytest.raises(UnexpectedResponseError, match="Content-Encoding") as caught:
            await api.session(client, "s1")
        assert repr(encoding) in str(caught.value)


# ----------------------------------------------------------------- memory, against a real socket


LIMIT = MiB // 2


async def peak_while(run: Callable[[], Awaitable[object]]) -> tuple[int, object]:
    """The peak of memory traced while `run` runs, and what it returned (or raised)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        try:
            outcome: object = await run()
        except Exception as error:
            outcome = error
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - before, outcome


def endless(first: bytes, piece: bytes) -> Callable[[Request, Connection], None]:
    """A chunked response: `first`, then `piece` again and again, until the client goes."""

    def respond(request: Request, connection: Connection) -> None:
        if not connection.send(first):
            return
        framed = chunk(piece)
        while connection.send(framed):
            pass

    return respond


ZEROS = gzipped(b"\0" * (32 * MiB))  # 32 KiB that inflate to 32 MiB
CHAT_HEAD = head(200, SSE, chunked=True) + chunk(event("session", {"sessionId": "s1"}))
MEMORY_CASES = {
    "endless-line": ("chat", endless(CHAT_HEAD + chunk(b"data: "), b"x" * 65536)),
    "huge-event": (
        "chat",
        endless(CHAT_HEAD + chunk(b"event: text\n"), b"data: " + b"y" * 65530 + b"\n"),
    ),
    "endless-events": ("chat", endless(CHAT_HEAD, event("text", {"text": "z" * 1000}))),
    "gzip-bomb-chat": (
        "chat",
        once(
            head(200, {**SSE, "content-encoding": "gzip", "content-length": str(len(ZEROS))})
            + ZEROS
        ),
    ),
    "gzip-bomb-history": (
        "get",
        once(
            head(
                200,
                {
                    "content-type": "application/json",
                    "content-encoding": "gzip",
                    "content-length": str(len(ZEROS)),
                },
            )
            + ZEROS
        ),
    ),
    "huge-history": (
        "get",
        endless(
            head(200, {"content-type": "application/json"}, chunked=True)
            + chunk(b'{"messages": ["'),
            b"w" * 65536,
        ),
    ),
}


async def test_memory_stays_a_small_multiple_of_the_limit(api: Api) -> None:
    cases = [(name, "max_response_bytes") for name in MEMORY_CASES]
    # An event or a line too long also passes the other limit, per event.
    cases += [("endless-line", "max_event_bytes"), ("huge-event", "max_event_bytes")]
    with by_case({name: respond for name, (_, respond) in MEMORY_CASES.items()}) as hostile:
        for name, limit in cases:
            endpoint = MEMORY_CASES[name][0]
            case = {"default_headers": {"x-case": name}, limit: LIMIT}
            client = api.client(base_url=hostile.url, max_retries=0, **case)

            async def run(client: Any = client, endpoint: str = endpoint) -> object:
                if endpoint == "chat":
                    return (await api.read(client))[1]
                return await api.session(client, "s1")

            with contextlib.suppress(SilviaError):  # once untraced: not what loads on first use
                await run()
            peak, outcome = await peak_while(run)
            await api.close(client)
            expected = StreamTooLargeError if endpoint == "chat" else ResponseTooLargeError
            assert isinstance(outcome, expected), (name, limit, outcome)
            assert peak < 4 * LIMIT, f"{name}, {limit}: {peak / MiB:.1f} MiB at the peak"


async def test_a_history_nested_too_deeply_is_an_unexpected_response(api: Api) -> None:
    deep = b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = response(200, deep, {"content-type": "application/json"})
    with HostileServer(once(answer)) as hostile:
        client = api.client(base_url=hostile.url)
        with pytest.raises(UnexpectedResponseError):
            await api.session(client, "s1")
