"""The async client under asyncio and under trio (anyio): what depends on the event loop.

A turn and a session over real sockets, a retry's sleep, the deadline and the idle
timeout firing mid-stream, a close from another task, a cancelled read, and the one
event loop a client's pool serves (the testing kit's as production's). The rest of the
async suite runs on asyncio only (`anyio_backend` in conftest.py).
"""

from __future__ import annotations

import contextlib
import math

import anyio
import httpx
import pytest
import respx

from silvia_client import AsyncChatStream, AsyncSilviaClient, EventLoopChangedError
from silvia_client.chat import ChatEvent
from silvia_client.errors import IncompleteTurnError, SilviaError, StreamTimeoutError
from silvia_client.testing import ReferenceServer

from ..hostile import HostileServer, chunk
from .conftest import by_case
from .sse import BASE_URL, CHAT_URL, Body, full_turn, session, sse_response, text
from .test_chat_stream import eventually, serve_body
from .test_deadline import GUARD, STREAM_START, stalling, trickling

pytestmark = pytest.mark.anyio
TOKEN = "sk-backends-test-token"
BACKENDS = ["asyncio", "trio"]


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_retry_sleeps_on_the_running_loop(server: respx.MockRouter) -> None:
    route = server.post(CHAT_URL).mock(side_effect=[httpx.Response(429), sse_response(full_turn())])
    async with AsyncSilviaClient(base_url=BASE_URL, token=TOKEN, retry_backoff=0.01) as client:
        turn = await client.with_options(max_retries=1).chat.send("hi")
    assert turn.complete
    assert route.call_count == 2


async def test_the_deadline_and_the_idle_timeout_fire_mid_stream() -> None:
    responders = {
        "trickle": trickling(STREAM_START, chunk(b": ping\n\n")),
        "stall": stalling,
    }
    with by_case(responders) as hostile:
        async with AsyncSilviaClient(
            base_url=hostile.url,
            token=TOKEN,
            default_headers={"x-case": "trickle"},
            deadline=0.5,
            idle_timeout=30,
        ) as client:
            with anyio.fail_after(GUARD), pytest.raises(StreamTimeoutError) as caught:
                await client.chat.send("hi")
        assert "deadline of 0.5 s" in str(caught.value)
        assert caught.value.turn.text == "Hello"  # the partial turn
        async with AsyncSilviaClient(
            base_url=hostile.url,
            token=TOKEN,
            default_headers={"x-case": "stall"},
            idle_timeout=0.3,
            deadline=math.inf,
        ) as client:
            with anyio.fail_after(GUARD), pytest.raises(StreamTimeoutError) as caught:
                await client.chat.send("hi")
    assert "idle timeout" in str(caught.value)
    assert caught.value.turn.text == "Hello"


@pytest.mark.parametrize("closer", ["stream", "client"])
async def test_a_close_from_another_task_ends_a_blocked_read(closer: str) -> None:
    with HostileServer(stalling) as hostile:
        client = AsyncSilviaClient(
            base_url=hostile.url, token=TOKEN, idle_timeout=math.inf, deadline=math.inf
        )
        stream = await client.chat.stream("hi").__aenter__()
        two_events = anyio.Event()
        got: list[ChatEvent] = []
        failed: list[SilviaError] = []

        async def read() -> None:
            try:
                async for one in stream:
                    got.append(one)
                    if len(got) == 2:
                        two_events.set()
            except SilviaError as error:
                failed.append(error)

        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(read)
                await two_events.wait()
                await anyio.sleep(0.2)  # the reader is blocked on the socket by now
                await (stream if closer == "stream" else client).close()
        await client.close()
    [error] = failed
    assert isinstance(error, IncompleteTurnError)
    assert error.turn.text == "Hello"


async def read_all(stream: AsyncChatStream, entered: bool, got: list[ChatEvent]) -> None:
    async with stream if entered else contextlib.nullcontext():
        async for event in stream:
            got.append(event)


async def test_a_cancelled_read_closes_the_response_with_or_without_with(
    server: respx.MockRouter,
) -> None:
    # The body sends a session and a text event, then goes silent.
    bodies = serve_body(server, lambda: Body([session("s1"), text("a")], hang=True))
    got: list[ChatEvent] = []
    async with AsyncSilviaClient(base_url=BASE_URL, token=TOKEN) as client:
        for entered in (True, False):
            got.clear()
            stream = client.chat.stream("hi")
            with anyio.fail_after(GUARD):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(read_all, stream, entered, got)
                    assert await eventually(lambda: len(got) == 2)
                    assert not bodies[-1].closed
                    tasks.cancel_scope.cancel()
            assert await eventually(lambda: bodies[-1].closed), entered
            assert "state='closed'" in repr(stream), entered


async def test_a_turn_and_its_session_over_a_real_socket() -> None:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        async with AsyncSilviaClient(base_url=url, token=TOKEN) as client:
            with anyio.fail_after(GUARD):
                turn = await client.chat.send("How much is in checking?")
                session = await client.sessions.get(str(turn.session_id))
    assert turn.complete
    assert turn.text
    assert session.messages[-1].text == turn.text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_event_loop_is_refused_alike_in_the_testing_kit_and_in_production(
    backend: str,
) -> None:
    server = ReferenceServer(token=TOKEN)
    said: list[str] = []
    with server.serve_loopback() as url:
        for client in (server.async_client(), AsyncSilviaClient(base_url=url, token=TOKEN)):

            async def turn(client: AsyncSilviaClient = client) -> bool:
                # No connection outlives the first loop (it could not be closed from another).
                headers = {"connection": "close"}
                return (await client.chat.send("hello", extra_headers=headers)).complete

            assert anyio.run(turn, backend=backend)
            with pytest.raises(EventLoopChangedError) as caught:
                anyio.run(turn, backend=backend)
            said.append(str(caught.value))
    assert said[0] == said[1]
    assert "one per asyncio.run" in said[0]
    assert len(server.sessions) == 2  # one turn each: the second loop's was never sent
