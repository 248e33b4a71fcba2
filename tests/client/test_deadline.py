"""Time and closing: a deadline bounds a whole operation, `timeout` the wait for a response's
head, `idle_timeout` the gaps between events; `close()` ends a blocked read from outside, and
any call after it raises `ClientClosedError` (never httpx's bare `RuntimeError`).

Servers that trickle, stall, pause or never answer run on 127.0.0.1 (`tests.hostile`), so
the real HTTP stack blocks as it would. No test asserts how long anything took but with a
generous bound: "it ends", or "it did not wait for the idle timeout" (with `timeout=2`,
`chat.send` once waited 90 s). From another task, under asyncio and trio: test_backends.py.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, ClientClosedError, EventLoopChangedError, SilviaClient
from silvia_client._deadline import Halt
from silvia_client.chat import ChatEvent, TextEvent
from silvia_client.errors import APITimeoutError, IncompleteTurnError, StreamTimeoutError

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head
from .conftest import Api, by_case, no_alarm
from .sse import (
    CHAT_URL,
    SSE_HEADERS,
    Body,
    done,
    full_turn,
    json_response,
    session,
    sse_response,
    text,
)

pytestmark = pytest.mark.anyio

GUARD = 60.0  # seconds: "it ends", on however loaded a machine
T = TypeVar("T")


async def ends(api: Api, make: Callable[[], Awaitable[T]]) -> T:
    """`await make()`, failing the test if it has not ended within `GUARD` seconds; for the
    sync client, which blocks, in a thread of its own (with its own loop)."""
    if api.is_async:
        return await asyncio.wait_for(make(), GUARD)
    outcome: Future[T] = Future()

    def run() -> None:
        try:
            outcome.set_result(asyncio.run(make()))  # type: ignore[arg-type]
        except BaseException as error:
            outcome.set_exception(error)

    threading.Thread(target=run, daemon=True).start()
    return await asyncio.wait_for(asyncio.wrap_future(outcome), GUARD)


STREAM_START = head(200, {**SSE, "x-request-id": "req_slow"}, chunked=True) + b"".join(
    chunk(e) for e in (event("session", {"sessionId": "s1"}), event("text", {"text": "Hello"}))
)


def trickling(
    start: bytes, drip: bytes, every: float = 0.2
) -> Callable[[Request, Connection], None]:
    """`start`, then `drip` every `every` seconds (0: as fast as it goes), until the client goes."""

    def respond(request: Request, connection: Connection) -> None:
        if not connection.send(start):
            return
        while connection.sleep(every) and connection.send(drip):
            pass

    return respond


def silent(request: Request, connection: Connection) -> None:
    connection.wait_for_close(GUARD)  # reads the request, never answers


def stalling(request: Request, connection: Connection) -> None:
    connection.send(STREAM_START)
    connection.wait_for_close(GUARD)


def thinking(request: Request, connection: Connection) -> None:
    """The head and a first event at once, then half a second of silence, then the rest."""
    first = head(200, SSE, chunked=True) + chunk(session("s1") + text("Hel"))
    if connection.send(first) and connection.sleep(0.5):
        connection.send(chunk(text("lo")) + chunk(done()) + chunk(b""))


# ---------------------------------------------------------- the deadline, timeout, idle_timeout


async def test_a_turn_that_trickles_or_stalls_ends_at_its_deadline_or_idle_timeout(
    api: Api,
) -> None:
    past_deadline = {"deadline": 0.3, "idle_timeout": 30}
    cases = [
        ("comments", past_deadline, "deadline of 0.3 s"),  # events of comments only
        ("bytes", past_deadline, "deadline of 0.3 s"),  # bytes that make no event
        ("stall", past_deadline, "deadline of 0.3 s"),
        ("stall", {"timeout": 5.0, "idle_timeout": 0.2}, "idle timeout (0.2 s)"),
    ]
    responders = {
        "comments": trickling(STREAM_START, chunk(b": ping\n\n")),
        "bytes": trickling(STREAM_START, chunk(b"x"), every=0.1),
        "stall": stalling,
    }
    with by_case(responders) as hostile:
        for name, options, said in cases:
            client = api.client(base_url=hostile.url, **options)
            events, error = await ends(
                api, partial(api.read, client, extra_headers={"x-case": name})
            )
            assert isinstance(error, StreamTimeoutError), name
            assert said in str(error), name
            assert error.turn.text == "Hello"  # the partial turn
            assert error.request_id == "req_slow"
            assert error.session_id == "s1"
            assert [type(e) for e in events][-1] is TextEvent


async def test_the_wait_for_a_head_ends_at_timeout_or_at_the_deadline(api: Api) -> None:
    # The bug this guards against: `timeout=2` waited for the 90 s idle timeout. Each
    # client has a deadline, so the bug fails here naming the deadline.
    head_timeout: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("chat", {"timeout": 0.2}, {}),
        ("chat", {"timeout": httpx.Timeout(10.0, read=0.2)}, {}),  # the read phase
        ("chat", {}, {"timeout": 0.2}),  # the call's own, over the default 60 s read
        ("session", {"timeout": 0.2, "retry_backoff": 0.01}, {}),
    ]
    deadline = {"deadline": 0.3, "timeout": 30, "idle_timeout": 30}
    cases = [(*case, "silent", False) for case in head_timeout]
    cases += [(endpoint, deadline, {}, "silent", True) for endpoint in ("chat", "session")]
    cases.append(("session", deadline, {}, "trickle", True))  # a body that never ends
    start = head(200, {"content-type": "application/json"}, chunked=True) + chunk(b'{"messages"')
    with by_case({"trickle": trickling(start, chunk(b" ")), "silent": silent}) as hostile:
        for endpoint, options, per_call, name, by_deadline in cases:
            case = (endpoint, options, per_call, name)
            client = api.client(base_url=hostile.url, **{"deadline": 20.0, **options})
            sent = len(hostile.requests)
            started = time.monotonic()
            with pytest.raises(APITimeoutError) as caught:
                await ends(
                    api,
                    partial(
                        api.request, client, endpoint, extra_headers={"x-case": name}, **per_call
                    ),
                )
            assert time.monotonic() - started < 10.0, case  # far below the 90 s of the bug
            if name == "trickle":
                assert "deadline of 0.3 s" in str(caught.value)
            elif not by_deadline:
                assert "deadline" not in str(caught.value), case
            # The message went out: it is never sent twice. A GET is retried, each attempt
            # bounded by `timeout` (under load the last attempt's connect can time out
            # before the server sees it); none starts once the deadline is past.
            sent = len(hostile.requests) - sent
            if by_deadline:
                assert sent <= (1 if endpoint == "chat" else 3), case
            else:
                assert (sent == 1) if endpoint == "chat" else (2 <= sent <= 3), case


async def test_after_the_head_a_pause_is_the_idle_timeouts_to_judge(api: Api) -> None:
    # A model that thinks for a while mid-answer: 0.5 s of silence, past the 0.2 s
    # `timeout`, within the 5 s `idle_timeout`.
    with HostileServer(thinking) as hostile:
        client = api.client(base_url=hostile.url, timeout=0.2, idle_timeout=5.0)
        turn = await api.turn(client)
    assert turn.complete
    assert turn.text == "Hello"


async def test_the_deadline_holds_on_a_transport_without_a_socket(
    api: Api, server: respx.MockRouter
) -> None:
    body = Body(session("s1") + text("Hi"), ping=0.05)  # no socket under it
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


# --------------------------------------------------------------------------------------- close()


def test_a_close_from_another_thread_ends_a_blocked_read() -> None:
    for closer in ("stream", "client"):
        _close_from_another_thread(closer)


def _close_from_another_thread(closer: str) -> None:
    with HostileServer(stalling) as hostile:
        client = SilviaClient(
            base_url=hostile.url, token="t", idle_timeout=math.inf, deadline=math.inf
        )
        stream = client.chat.stream("hi").__enter__()
        got: list[ChatEvent] = []
        outcome: list[BaseException] = []
        two_events = threading.Event()

        def read() -> None:
            try:
                for one in stream:
                    got.append(one)
                    if len(got) == 2:
                        two_events.set()
            except BaseException as error:
                outcome.append(error)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert two_events.wait(GUARD)
        time.sleep(0.2)  # the reader is now blocked in a read nothing else would end
        (stream if closer == "stream" else client).close()
        reader.join(GUARD)
        assert not reader.is_alive(), f"{closer}: the blocked read did not end"
        client.close()
    (error,) = outcome
    assert isinstance(error, IncompleteTurnError), repr(error)  # not "generator already ..."
    assert error.turn.text == "Hello"
    assert error.request_id == "req_slow"
    with pytest.raises(IncompleteTurnError):
        stream.until_done()
    with pytest.raises(ClientClosedError):
        client.chat.send("again")


async def test_close_closes_the_sdks_own_pool_and_every_call_after_is_a_client_closed_error(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    client = api.client()
    copy = client.with_options(deadline=30)
    await api.close(copy)
    assert (await api.turn(copy)).complete  # the copy's close() did nothing
    assert (await api.turn(client)).complete
    sent = len(server.calls)
    await api.close(client)  # closes its copies too
    for call in (
        lambda: api.turn(client),
        lambda: api.session(client, "s1"),
        lambda: api.turn(copy),
    ):
        with pytest.raises(ClientClosedError, match="closed"):
            await call()
    assert len(server.calls) == sent
    # close() and `with` close the SDK's own pool, never a caller's.
    http = api.http()
    for mine in (http, None):
        client = api.client(http_client=mine)
        await api.close(client)
        assert client._pool.get().is_closed is (mine is None)
        client = api.client(http_client=mine)
        if isinstance(client, AsyncSilviaClient):
            async with client:
                assert not client._pool.get().is_closed
        else:
            with client:
                assert not client._pool.get().is_closed
        assert client._pool.get().is_closed is (mine is None)
    assert not http.is_closed
    # A pool its caller closed under the client.
    client = api.client(http_client=http)
    await api.call(http.aclose if isinstance(http, httpx.AsyncClient) else http.close)
    with pytest.raises(ClientClosedError, match="pool is closed"):
        await api.turn(client)


async def test_the_async_silvia_fixture_refuses_another_event_loop(
    async_silvia: AsyncSilviaClient,
) -> None:
    assert (await async_silvia.chat.send("hi")).complete
    with pytest.raises(EventLoopChangedError):
        await asyncio.to_thread(asyncio.run, async_silvia.chat.send("again"))
    assert (await async_silvia.chat.send("and on the test's loop")).complete


# ------------------------------------------------------------ a call's deadline, without I/O


def test_a_call_expires_when_its_guard_stops_or_its_deadline_passes_and_cuts_its_reads() -> None:
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
    # Its reads wait `timeout` for the head, then `idle_timeout`, each cut to the time left.
    timeout = httpx.Timeout(50, read=4)
    with SilviaClient(
        base_url="https://silvia.test", token="t", timeout=timeout, idle_timeout=9
    ) as client:
        chat = client._call("chat", deadline=math.inf)
        request = client._pool.get().build_request("POST", "https://silvia.test/api/chat")
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
