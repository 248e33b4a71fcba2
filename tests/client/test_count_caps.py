"""Memory bounded by a documented multiple for the worst shape (issue 20, finding 8): a call
reads at most `max_response_bytes // 64` JSON objects and SSE events, so a body of tiny rows
cannot grow 45-fold in memory past what its byte limit suggests. Nothing is dropped: the call
stops with the limit's error, and a stream hands back its partial turn."""

from __future__ import annotations

import httpx
import pytest
import respx

from silvia_client._wire import DEFAULTS
from silvia_client.errors import ResponseTooLargeError, StreamTooLargeError

from .conftest import Api
from .sse import BASE_URL, CHAT_URL, Body, session, sse_response, text

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
LIMIT = 1024 * 1024  # bytes: so a call reads at most LIMIT // 64 = 16,384 objects and events
CAP = LIMIT // DEFAULTS.bytes_per_object


def history(rows: int) -> bytes:
    cited = b",".join([b'{"source":"a"}'] * rows)
    return (
        b'{"session":{"id":"s1"},"messages":[{"id":"m","role":"assistant","content":"x",'
        b'"citations":[' + cited + b"]}]}"
    )


async def test_a_history_of_more_objects_than_the_cap_is_refused_before_it_is_read(
    api: Api, server: respx.MockRouter
) -> None:
    body = history(CAP)  # under LIMIT in bytes (17 a row), over the cap in objects
    assert len(body) < LIMIT
    headers = {"x-request-id": "req_many"}
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body, headers=headers))
    with pytest.raises(ResponseTooLargeError) as caught:
        await api.session(api.client(max_response_bytes=LIMIT), "s1")
    assert str(caught.value) == (
        "the body holds more than 16,384 JSON objects, the most a body of "
        "max_response_bytes may (max_response_bytes // 64)"
    )
    # The byte limit the cap comes from, as a stream's `StreamTooLargeError` says it.
    assert (caught.value.limit, caught.value.request_id) == (LIMIT, "req_many")


async def test_a_history_under_the_cap_reads_every_row(api: Api, server: respx.MockRouter) -> None:
    rows = CAP - 3  # the session, the messages' object, and one message: CAP objects
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=history(rows)))
    got = await api.session(api.client(max_response_bytes=LIMIT), "s1")
    assert len(got.messages[0].citations) == rows


async def test_a_stream_of_more_events_than_the_cap_stops_with_its_partial_turn(
    api: Api, server: respx.MockRouter
) -> None:
    events = [session("s1")] + [text("a")] * (CAP // 2 + 10)  # two units each: over the cap
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(Body(events)))
    _, error = await api.read(api.client(max_response_bytes=LIMIT))
    assert isinstance(error, StreamTooLargeError)
    assert "16,384 events and JSON objects" in str(error)
    assert error.turn.session_id == "s1"
    assert 0 < len(error.turn.text) < CAP  # what came before the cap, kept


async def test_a_small_limit_still_reads_a_small_body_of_many_objects(
    api: Api, server: respx.MockRouter
) -> None:
    body = history(500)  # 8.5 KB: 500 objects, past 8,500 // 64 but under the floor
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body))
    got = await api.session(api.client(max_response_bytes=len(body)), "s1")
    assert len(got.messages[0].citations) == 500
    assert DEFAULTS.min_objects > 500


def test_the_default_caps_keep_one_call_under_a_gibibyte() -> None:
    # bench_limits.py measures ~780 bytes at the peak for each tiny row read, the most any
    # shape costs per object: at the defaults, a call's worst case stays under 1 GiB.
    worst = DEFAULTS.max_response_bytes + (DEFAULTS.max_response_bytes // 64) * 800
    assert worst < 2**30
    assert DEFAULTS.max_response_bytes >= 41_000_000  # bench_history's body still reads
