"""Time: a deadline bounds a whole operation, and a blocked read can be ended from outside.

Servers that trickle, stall or never answer run on 127.0.0.1 (`tests.hostile`),
so the real HTTP stack blocks as it would. No test asserts how long anything
took: only that it ends (within a generous guard), and how.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import httpx
import pytest
import respx

from silvia_client import SilviaClient
from silvia_client._deadline import Halt
from silvia_client.chat import TextEvent
from silvia_client.errors import (
    APITimeoutError,
    StreamTimeoutError,
)

from ..hostile import SSE, Connection, Request, chunk, event, head
from .conftest import Api, by_case, no_alarm
from .sse import CHAT_URL, SSE_HEADERS, Body, full_turn, json_response, session, sse_response, text

pytestmark = pytest.mark.anyio

GUARD = 60.0  # seconds: "it ends", on however loaded a machine
T = TypeVar("T")


async def ends(api: Api, make: Callable[[], Awaitable[T]]) -> T:
    """`await make()`, failing the test if it has not ended within `GUARD` seconds.

    The sync client blocks, so it runs in a thread of its own (with its own loop).
    """
    if api.is_async:
        return await asyncio.wait_for(make(), GUARD)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    start = time.monotonic()
    while thread.is_alive() and time.monotonic() - start < GUARD:
        await asyncio.sleep(0.02)
    assert not thread.is_alive(), "it did not end"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


STREAM_START = head(200, {**SSE, "x-request-id": "req_slow"}, chunked=True) + b"".join(
    chunk(e) for e in (event("session", {"sessionId": "s1"}), event("text", {"text": "Hello"}))
)


def trickling(
    start: bytes, drip: bytes, every: float = 0.2
) -> Callable[[Request, Connection], None]:
    """`start`, then `drip` every `every` seconds, forever: never silent for an idle timeout."""

    def respond(request: Request, connection: Connection) -> None:
        if not connection.send(start):
            return
        while connection.sleep(every) and connection.send(drip):
            pass

    return respond


def silent(request: Request, connection: Connection) -> None:
    connection.wait_for_close(GUARD)  # reads the request, never answers


def stalling(start: bytes) -> Callable[[Request, Connection], None]:
    def respond(request: Request, connection: Connection) -> None:
        connection.send(start)
        connection.wait_for_close(GUARD)

    return respond


# -------------------------------------------------------------------------------- the deadline


async def test_a_turn_that_trickles_or_stalls_past_its_deadline(api: Api) -> None:
    responders = {
        "comments": trickling(STREAM_START, chunk(b": ping\n\n")),  # events of comments only
        "bytes": trickling(STREAM_START, chunk(b"x"), every=0.1),  # bytes that make no event
        "stall": stalling(STREAM_START),
    }
    with by_case(responders) as hostile:
        for name in responders:
            client = api.client(base_url=hostile.url, deadline=0.3, idle_timeout=30)
            events, error = await ends(
                api, partial(api.read, client, extra_headers={"x-case": name})
            )
            assert isinstance(error, StreamTimeoutError), name
            assert "deadline of 0.3 s" in str(error)
            assert error.turn.text == "Hello"  # the partial turn
            assert error.request_id == "req_slow"
            assert error.session_id == "s1"
            assert [type(e) for e in events][-1] is TextEvent


async def test_a_get_that_trickles_and_a_server_that_never_answers(api: Api) -> None:
    start = head(200, {"content-type": "application/json"}, chunked=True) + chunk(b'{"messages"')
    responders = {"trickle": trickling(start, chunk(b" ")), "silent": silent}
    with by_case(responders) as hostile:
        client = api.client(base_url=hostile.url, deadline=0.3)
        with pytest.raises(APITimeoutError, match=r"deadline of 0\.3 s"):
            await ends(
                api, partial(api.request, client, "session", extra_headers={"x-case": "trickle"})
            )
        for endpoint in ("chat", "session"):
            client = api.client(base_url=hostile.url, deadline=0.3, timeout=30, idle_timeout=30)
            sent = len(hostile.requests)
            with pytest.raises(APITimeoutError):  # before any event: the stream never opened
                await ends(
                    api, partial(api.request, client, endpoint, extra_headers={"x-case": "silent"})
                )
            # The retries of the GET fit in the deadline: none starts once it is past.
            assert len(hostile.requests) - sent <= 3, endpoint


class Dripping(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body with no socket under it: `first`, then a keep-alive now and then, forever."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        while True:
            time.sleep(0.05)
            yield b": ping\n\n"

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        while True:
            await asyncio.sleep(0.05)
            yield b": ping\n\n"

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


async def test_the_deadline_holds_on_a_transport_without_a_socket(
    api: Api, server: respx.MockRouter
) -> None:
    body = Dripping(session("s1") + text("Hi"))
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(200, headers=SSE_HEADERS, stream=body)
    )
    client = api.client(deadline=0.5)
    _, error = await ends(api, lambda: api.read(client))
    assert isinstance(error, StreamTimeoutError)
    assert error.turn.text == "Hi"
    assert body.closed


async def test_the_default_deadlines_cut_every_timeout(api: Api, server: respx.MockRouter) -> None:
    chat = server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    get = server.get("/api/chat/sessions/s1").mock(
        return_value=json_response({"session": {"id": "s1"}, "messages": []})
    )
    client = api.client(timeout=None, idle_timeout=math.inf)  # no timeouts but the deadline
    await api.turn(client)
    await api.session(client, "s1")
    for route, seconds in ((chat, 600), (get, 120)):
        phases = route.calls.last.request.extensions["timeout"]
        assert all(seconds - 30 < value <= seconds for value in phases.values()), phases
    # A deadline given to the client applies to both; one per call, to that call.
    client = api.client(timeout=None, idle_timeout=math.inf, deadline=50)
    await api.turn(client)
    await api.session(client, "s1")
    await api.turn(client, deadline=20)
    for route, seconds in ((chat, 20), (get, 50)):
        phases = route.calls.last.request.extensions["timeout"]
        assert all(seconds - 10 < value <= seconds for value in phases.values()), phases
    # `math.inf`: no deadline at all.
    await api.turn(client, deadline=math.inf)
    assert chat.calls.last.request.extensions["timeout"]["read"] is None


# ------------------------------------------------------------------ close() ends a blocked read
# (from another thread or task, by the stream's `close()` or the client's: `test_close.py`)


def test_closing_in_the_reading_thread_still_closes_at_once(
    server: respx.MockRouter,
) -> None:
    body = Body([session("s1"), text("a"), text("b")])
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(200, headers=SSE_HEADERS, stream=body)
    )
    with SilviaClient(base_url="https://silvia.test", token="t") as client:
        stream = client.chat.stream("hi")
        with stream:
            for one in stream:
                if isinstance(one, TextEvent):
                    stream.close()
                    break
        assert body.closed
        assert "closed" in repr(stream)


# ------------------------------------------------------------ a call's deadline, without I/O


def test_a_call_is_not_expired_until_its_guard_stops_or_its_deadline_passes() -> None:
    with SilviaClient(base_url="https://silvia.test", token="t") as client:
        call = client._call("get", deadline=30)
        assert call.guard is None
        assert not call.expired()
        guard = call.start(no_alarm)
        assert call.guard is guard
        assert guard.reason is None
        guard.stop("deadline")
        assert call.expired()
        call = client._call("chat", deadline=0.5)
        call.start(no_alarm)
        assert not call.expired()
        request = httpx.Request("POST", "https://silvia.test/chat")  # no timeout extension yet
        call.wait_between_events(request)
        assert 0 < request.extensions["timeout"]["read"] <= 0.5
        call.at -= 1  # past it
        assert call.expired()
        with pytest.raises(Halt) as caught:
            call.wait_between_events(request)
        assert caught.value.reason == "deadline"


def test_a_calls_reads_wait_timeout_for_the_head_then_idle_timeout_cut_to_the_time_left() -> None:
    timeout = httpx.Timeout(50, read=4)
    with SilviaClient(
        base_url="https://silvia.test", token="t", timeout=timeout, idle_timeout=9
    ) as client:
        chat = client._call("chat", deadline=math.inf)
        request = client._http.build_request("POST", "https://silvia.test/api/chat")
        request.extensions["timeout"] = chat.timeouts()
        assert request.extensions["timeout"] == {"connect": 50, "read": 4, "write": 50, "pool": 50}
        chat.wait_between_events(request)
        assert request.extensions["timeout"] == {"connect": 50, "read": 9, "write": 50, "pool": 50}
        get = client._call("get", deadline=20)
        get.start(no_alarm)
        cut = get.timeouts()  # to the time left, where it is shorter
        assert cut["read"] == 4
        assert all(10 < (cut[phase] or 0) <= 20 for phase in ("connect", "write", "pool"))
        get.at -= 30  # past it
        with pytest.raises(APITimeoutError, match="deadline of 20 s"):
            get.timeouts()
    with SilviaClient(base_url="https://silvia.test", token="t", idle_timeout=math.inf) as client:
        chat = client._call("chat", deadline=math.inf)
        chat.wait_between_events(request)
        assert request.extensions["timeout"]["read"] is None  # no idle timeout, no deadline
        chat = client._call("chat", deadline=20)
        chat.at = time.monotonic() + 20
        chat.wait_between_events(request)
        read = request.extensions["timeout"]["read"]
        assert read is not None
        assert 10 < read <= 20
