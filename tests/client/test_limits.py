"""Memory: a chat stream and a history body are bounded, and a body over the bound is a typed error.

`max_response_bytes` bounds a history body and a whole chat stream, counted decoded, and
`max_response_bytes // 32` the JSON values and SSE events of a call, counted before decoding
(tiny values grow 30 to 45 times once decoded: issue 20, finding 8; issue 28, finding 6).
The read stops there, a stream with its partial turn, so memory stays a small multiple of
the limit (`tracemalloc`, against a raw socket; the caps' cost: `benchmarks/bench_limits.py`).
"""

from __future__ import annotations

import contextlib
import json
import tracemalloc
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import httpx
import pytest
import respx

from silvia_client._sse import most_values
from silvia_client._wire import DEFAULTS
from silvia_client.errors import (
    ResponseTooLargeError,
    SilviaError,
    StreamTooLargeError,
    UnexpectedResponseError,
)

from ..hostile import SSE, chunk, event, head
from .conftest import Api, by_case, once
from .sse import CHAT_URL, Body, compressed, done, session, sse_response, text
from .test_deadline import trickling

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024
SESSION_PATH = "/api/chat/sessions/s1"


# ------------------------------------------------------------------------------ the limit itself


async def test_a_stream_over_either_limit_stops_with_its_partial_turn_and_a_history_refused(
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
    # An event over max_event_bytes stops it there too.
    body = Body([session("s1"), text("Hello"), text("x" * 5000), *(text("y") for _ in range(100))])
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
    # A history body over the limit is a ResponseTooLargeError.
    payload = json.dumps({"session": {"id": "s1"}, "messages": [{"content": "x" * 5000}]})
    route = server.get(SESSION_PATH).mock(
        return_value=httpx.Response(200, text=payload, headers={"x-request-id": "req_h"})
    )
    client = api.client(max_response_bytes=1000)
    with pytest.raises(ResponseTooLargeError) as caught:
        await api.session(client, "s1")
    assert (caught.value.limit, caught.value.request_id) == (1000, "req_h")
    assert route.call_count == 1  # not retried: it would be as large again
    # The limit of one call wins over the client's, as exact as the body's length.
    for method in (client.sessions.get, client.sessions.get_raw):
        assert await api.call(method, "s1", max_response_bytes=len(payload))
        with pytest.raises(ResponseTooLargeError) as caught:
            await api.call(method, "s1", max_response_bytes=len(payload) - 1)
        assert caught.value.limit == len(payload) - 1
    whole = session("s1") + text("Hello" * 100) + done()
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(whole))
    assert (await api.turn(client, max_response_bytes=len(whole))).complete
    _, error = await api.read(client, max_response_bytes=len(whole) - 1)
    assert isinstance(error, StreamTooLargeError)


# --------------------------------------------------------------------------- decoded, not raw


async def test_a_body_is_decoded_as_its_content_encoding_says_or_refused_naming_it(
    api: Api, server: respx.MockRouter
) -> None:
    # Each spelling of a coding: test_body_reads.py. Counted decoded: the gzip bombs below.
    whole = session("s1") + text("Hello") + done()
    payload = json.dumps({"session": {"id": "s1"}, "messages": []}).encode()
    client = api.client(max_retries=0)
    codings = [("gzip", 31), ("deflate", 15), ("deflate", -15)]
    codings += [(refused, 31) for refused in ("br", "zstd", "gzip, gzip", "compress")]
    for encoding, wbits in codings:
        packed = compressed(whole, wbits)
        route = server.post(CHAT_URL).mock(
            side_effect=lambda r, packed=packed, encoding=encoding: sse_response(
                Body([packed[:7], packed[7:]]), headers={"content-encoding": encoding}
            )
        )
        server.get(SESSION_PATH).mock(
            return_value=httpx.Response(
                200,
                stream=Body(compressed(payload, wbits)),
                headers={"content-encoding": encoding, "content-type": "application/json"},
            )
        )
        if encoding in ("gzip", "deflate"):
            assert (await api.turn(client)).complete, wbits
            assert (await api.session(client, "s1")).id == "s1", wbits
            continue
        with pytest.raises(UnexpectedResponseError) as caught:
            await api.turn(client)
        assert repr(encoding) in str(caught.value)
        assert "DecodingError" not in str(caught.value)
        with pytest.raises(UnexpectedResponseError, match="Content-Encoding") as caught:
            await api.session(client, "s1")
        assert repr(encoding) in str(caught.value)
    assert route.calls.last.request.headers["accept-encoding"] == "gzip, deflate"


# ----------------------------------------------------------------- memory, against a real socket


BOUND = MiB // 2


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


ZEROS = compressed(b"\0" * (32 * MiB))  # 32 KiB that inflate to 32 MiB
CHAT_HEAD = head(200, SSE, chunked=True) + chunk(event("session", {"sessionId": "s1"}))


def bomb(content_type: str) -> bytes:
    """A response of `ZEROS`, gzipped."""
    headers = {"content-type": content_type, "content-encoding": "gzip"}
    return head(200, {**headers, "content-length": str(len(ZEROS))}) + ZEROS


# Endless: a chunked response that sends its piece again and again, until the client goes.
MEMORY_CASES = {
    "endless-line": ("chat", trickling(CHAT_HEAD + chunk(b"data: "), chunk(b"x" * 65536), 0)),
    "huge-event": (
        "chat",
        trickling(CHAT_HEAD + chunk(b"event: text\n"), chunk(b"data: " + b"y" * 65530 + b"\n"), 0),
    ),
    "endless-events": ("chat", trickling(CHAT_HEAD, chunk(event("text", {"text": "z" * 1000})), 0)),
    "gzip-bomb-chat": ("chat", once(bomb(SSE["content-type"]))),
    "gzip-bomb-history": ("get", once(bomb("application/json"))),
    "huge-history": (
        "get",
        trickling(
            head(200, {"content-type": "application/json"}, chunked=True)
            + chunk(b'{"messages": ["'),
            chunk(b"w" * 65536),
            0,
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
            case = {"default_headers": {"x-case": name}, limit: BOUND}
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
            assert peak < 4 * BOUND, f"{name}, {limit}: {peak / MiB:.1f} MiB at the peak"


# -------------------------------------------------------------------------- the values cap

LIMIT = 1024 * 1024  # bytes: so a call reads at most LIMIT // 32 = 32,768 values and events
CAP = LIMIT // DEFAULTS.bytes_per_value
HEAD = b'{"session":{"id":"s1"},"messages":[{"id":"m","role":"assistant","content":"x",'


def history(rows: int) -> bytes:
    cited = b",".join([b'{"source":"a"}'] * rows)
    return HEAD + b'"citations":[' + cited + b"]}]}"


def history_with(field: bytes) -> bytes:
    """A history of one message whose unmodelled field `x` holds `field`."""
    return HEAD + b'"x":' + field + b"}]}"


def repeated(piece: bytes, size: int) -> bytes:
    """A JSON array of `piece`s, about `size` bytes."""
    return b"[" + b",".join([piece] * (size // (len(piece) + 1))) + b"]"


async def test_a_history_is_read_up_to_the_values_cap_and_refused_past_it(
    api: Api, server: respx.MockRouter
) -> None:
    # The cap is max_response_bytes // 32 values, never below `DEFAULTS.min_values`;
    # each `{`, `:` and `,` counts as one, even in a string.
    rows = (CAP - most_values(history(0))) // 3  # 3 values a row
    small = history(500)  # 8.5 KB: 1,500 values, past 8,500 // 32 but under the floor
    assert most_values(history(rows)) <= CAP
    assert most_values(small) < DEFAULTS.min_values
    for body, limit, cited in [(history(rows), LIMIT, rows), (small, len(small), 500)]:
        server.get(SESSION_PATH).mock(return_value=httpx.Response(200, content=body))
        got = await api.session(api.client(max_response_bytes=limit), "s1")
        assert len(got.messages[0].citations) == cited
    over = history(CAP // 3)  # under LIMIT in bytes (17 a row), over the cap in values
    assert len(over) < LIMIT
    assert most_values(over) > CAP
    headers = {"x-request-id": "req_many"}
    server.get(SESSION_PATH).mock(return_value=httpx.Response(200, content=over, headers=headers))
    with pytest.raises(ResponseTooLargeError) as caught:
        await api.session(api.client(max_response_bytes=LIMIT), "s1")
    assert str(caught.value) == (
        "the body holds more than 32,768 JSON values, the most a body of "
        "max_response_bytes may (max_response_bytes // 32)"
    )
    # The byte limit the cap comes from, as a stream's `StreamTooLargeError` says it.
    assert (caught.value.limit, caught.value.request_id) == (LIMIT, "req_many")
    # Past the floor, a limit of exactly the cap's bytes reads it; one byte less does not.
    commas = history_with(b'"' + b"," * DEFAULTS.min_values + b'"')
    server.get(SESSION_PATH).mock(return_value=httpx.Response(200, content=commas))
    cap = most_values(commas) * DEFAULTS.bytes_per_value
    assert cap > len(commas)  # the byte limit is not what refuses below
    client = api.client()
    assert await api.call(client.sessions.get, "s1", max_response_bytes=cap)
    with pytest.raises(ResponseTooLargeError, match="JSON values") as caught:
        await api.call(client.sessions.get, "s1", max_response_bytes=cap - 1)
    assert caught.value.limit == cap - 1


# The shapes that grow most once decoded, as a JSON value of about `size` bytes. Before,
# only `{` counted, and each was decoded whole (`[0],` grows 29 times its size).
SHAPES: dict[str, Callable[[int], bytes]] = {
    "small arrays": partial(repeated, b"[0]"),
    "short strings": partial(repeated, b'"ab"'),
    "small numbers": partial(repeated, b"7"),
    "many keys": lambda size: b"{" + b",".join(b'"k%d":0' % i for i in range(size // 12)) + b"}",
    "deep nesting": partial(repeated, b"[" * 500 + b"]" * 500),
}


async def test_tiny_values_or_many_events_stop_a_history_undecoded_and_a_stream_with_its_turn(
    api: Api, server: respx.MockRouter
) -> None:
    client = api.client(max_retries=0, max_response_bytes=LIMIT)
    for shape, make in SHAPES.items():
        body = history_with(make(LIMIT - 200))
        assert len(body) < LIMIT  # under the byte limit, over the cap in values
        assert most_values(body) > CAP
        server.get(SESSION_PATH).mock(return_value=httpx.Response(200, content=body))
        with pytest.raises(ResponseTooLargeError, match="JSON values") as caught:
            await api.session(client, "s1")
        assert caught.value.limit == LIMIT, shape
    # Many events (`{"text": "a"}` is the event and 3 values), or citation events whose
    # unmodelled field holds tiny values: three, under the byte limit, over the cap in values.
    streams = {"many events": [text("a")] * (CAP // 4 + 10)}
    for shape in ["small arrays", "short strings", "many keys"]:
        data = b'{"citation":{"source":"a","x":' + SHAPES[shape](LIMIT // 4) + b"}}"
        sent = b"event: citation\ndata: " + data + b"\n\n"
        assert 3 * len(sent) < LIMIT
        assert most_values(data) > CAP // 3
        streams[shape] = [sent] * 3
    for name, events in streams.items():
        stream = Body([session("s1"), text("a"), *events])
        server.post(CHAT_URL).mock(return_value=sse_response(stream))
        _, error = await api.read(client)
        assert isinstance(error, StreamTooLargeError), name
        assert error.limit == LIMIT
        assert "32,768 events and JSON values" in str(error)
        assert error.turn.session_id == "s1"
        assert 0 < len(error.turn.text) < CAP  # what came before the cap, kept


def test_the_default_caps_keep_one_call_under_a_gibibyte() -> None:
    # bench_limits.py measures at most ~300 bytes at the peak for each value of the worst
    # shapes (rows the SDK reads into objects of its own: a `Citation`, a `RowError`), and
    # three copies of the rest of the body (its bytes, its text, a string it holds).
    limit = DEFAULTS.max_response_bytes
    worst = 3 * limit + (limit // DEFAULTS.bytes_per_value) * 300
    assert worst < 2**30
    # A real history holds a value in about 15 bytes (bench_history's corpus): one of
    # 30 MB, far past any real session, is still read whole at the defaults.
    assert limit // DEFAULTS.bytes_per_value > 30_000_000 // 15
