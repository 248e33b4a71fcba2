"""Memory bounded by a documented multiple for every shape (issue 20, finding 8; issue 28,
finding 6): a call reads at most `max_response_bytes // 32` JSON values and SSE events,
counted before decoding, so a body of tiny values (rows, small arrays, short strings,
objects of many keys, nesting) cannot grow 30 to 45 times in memory past what its byte
limit suggests. Nothing is dropped: the call stops with the limit's error, and a stream
hands back its partial turn. What the caps cost in memory is measured by
`benchmarks/bench_limits.py`; here, by the error's type and limit."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import httpx
import pytest
import respx

from silvia_client._sse import most_values
from silvia_client._wire import DEFAULTS
from silvia_client.errors import ResponseTooLargeError, StreamTooLargeError

from ..hostile import SSE, Respond, chunk, head, response
from .conftest import Api, by_case, once
from .sse import BASE_URL, CHAT_URL, Body, session, sse_response, text

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
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


async def test_a_history_of_more_values_than_the_cap_is_refused_before_it_is_read(
    api: Api, server: respx.MockRouter
) -> None:
    body = history(CAP // 3)  # under LIMIT in bytes (17 a row), 3 values a row: over the cap
    assert len(body) < LIMIT
    assert most_values(body) > CAP
    headers = {"x-request-id": "req_many"}
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body, headers=headers))
    with pytest.raises(ResponseTooLargeError) as caught:
        await api.session(api.client(max_response_bytes=LIMIT), "s1")
    assert str(caught.value) == (
        "the body holds more than 32,768 JSON values, the most a body of "
        "max_response_bytes may (max_response_bytes // 32)"
    )
    # The byte limit the cap comes from, as a stream's `StreamTooLargeError` says it.
    assert (caught.value.limit, caught.value.request_id) == (LIMIT, "req_many")


async def test_a_history_under_the_cap_reads_every_row(api: Api, server: respx.MockRouter) -> None:
    rows = (CAP - most_values(history(0))) // 3  # 3 values a row: `{`, `:` and `,`
    body = history(rows)
    assert most_values(body) <= CAP
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body))
    got = await api.session(api.client(max_response_bytes=LIMIT), "s1")
    assert len(got.messages[0].citations) == rows


def many_keys(size: int) -> bytes:
    return b"{" + b",".join(b'"k%d":0' % i for i in range(size // 12)) + b"}"


# The shapes that grow most once decoded, as a JSON value of about `size` bytes. Before,
# only `{` counted, and each was decoded whole (`[0],` grows 29 times its size).
SHAPES: dict[str, Callable[[int], bytes]] = {
    "small arrays": partial(repeated, b"[0]"),
    "short strings": partial(repeated, b'"ab"'),
    "small numbers": partial(repeated, b"7"),
    "many keys": many_keys,
    "deep nesting": partial(repeated, b"[" * 500 + b"]" * 500),
}


def history_answer(shape: str) -> Respond:
    body = history_with(SHAPES[shape](LIMIT - 200))
    assert len(body) < LIMIT  # under the byte limit, over the cap in values
    assert most_values(body) > CAP
    answer = response(200, body, {"content-type": "application/json"})
    return once(answer)


def stream_answer(shape: str) -> Respond:
    # Citation events whose unmodelled field holds tiny values: three of them, under the
    # byte limit together, over the cap in values.
    data = b'{"citation":{"source":"a","x":' + SHAPES[shape](LIMIT // 4) + b"}}"
    sent = chunk(b"event: citation\ndata: " + data + b"\n\n")
    assert 3 * len(sent) < LIMIT
    assert most_values(data) > CAP // 3
    answer = head(200, SSE, chunked=True) + chunk(session("s1")) + 3 * sent + chunk(b"")
    return once(answer)


async def test_tiny_values_stop_a_history_before_it_is_decoded_and_a_stream_with_its_turn(
    api: Api,
) -> None:
    streamed = ["small arrays", "short strings", "many keys"]
    responders = {f"get {shape}": history_answer(shape) for shape in SHAPES}
    responders |= {f"chat {shape}": stream_answer(shape) for shape in streamed}
    with by_case(responders) as hostile:
        for name in responders:
            case = {"x-case": name}
            client = api.client(
                base_url=hostile.url, default_headers=case, max_retries=0, max_response_bytes=LIMIT
            )
            if name.startswith("get"):
                with pytest.raises(ResponseTooLargeError) as caught:
                    await api.session(client, "s1")
                assert caught.value.limit == LIMIT, name
                assert "JSON values" in str(caught.value), name
                continue
            _, error = await api.read(client)
            assert isinstance(error, StreamTooLargeError), name
            assert error.limit == LIMIT
            assert "events and JSON values" in str(error)
            assert error.turn.session_id == "s1"


async def test_a_stream_of_more_events_than_the_cap_stops_with_its_partial_turn(
    api: Api, server: respx.MockRouter
) -> None:
    # `{"text": "a"}`: the event, and 3 values (`{`, `:`, and the first): 4 a text event.
    events = [session("s1")] + [text("a")] * (CAP // 4 + 10)
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(Body(events)))
    _, error = await api.read(api.client(max_response_bytes=LIMIT))
    assert isinstance(error, StreamTooLargeError)
    assert "32,768 events and JSON values" in str(error)
    assert error.turn.session_id == "s1"
    assert 0 < len(error.turn.text) < CAP  # what came before the cap, kept


async def test_a_small_limit_still_reads_a_small_body_of_many_values(
    api: Api, server: respx.MockRouter
) -> None:
    body = history(500)  # 8.5 KB: 1,500 values, past 8,500 // 32 but under the floor
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body))
    got = await api.session(api.client(max_response_bytes=len(body)), "s1")
    assert len(got.messages[0].citations) == 500
    assert most_values(body) < DEFAULTS.min_values


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
