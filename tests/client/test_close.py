"""Close means closed (issue 20, finding 11): `close()` ends every stream the client opened, in
any thread, with the stream's error and its partial turn; any call after it raises
`ClientClosedError`, a `SilviaError`, never httpx's bare `RuntimeError`."""

from __future__ import annotations

import asyncio
import gc
import math
import threading
import time
import warnings

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import ChatEvent
from silvia_client.errors import ClientClosedError, IncompleteTurnError, SilviaError, StreamError
from silvia_client.testing import ReferenceServer

from ..hostile import HostileServer
from .conftest import Api
from .sse import CHAT_URL, full_turn, sse_response
from .test_deadline import GUARD, STREAM_START, stalling

SESSION_URL = "https://silvia.test/api/chat/sessions/s1"


@pytest.mark.parametrize("closer", ["stream", "client"])
def test_a_close_from_another_thread_ends_a_blocked_read(closer: str) -> None:
    with HostileServer(stalling(STREAM_START)) as hostile:
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
        assert not reader.is_alive(), "the blocked read did not end"
        client.close()
    (error,) = outcome
    assert isinstance(error, StreamError), repr(error)  # never "generator already executing"
    assert isinstance(error, IncompleteTurnError)
    assert error.turn.text == "Hello"
    assert error.request_id == "req_slow"
    with pytest.raises(IncompleteTurnError):
        stream.until_done()
    with pytest.raises(ClientClosedError):
        client.chat.send("again")


@pytest.mark.anyio
@pytest.mark.parametrize("closer", ["stream", "client"])
async def test_a_close_from_another_task_ends_a_blocked_read(closer: str) -> None:
    with HostileServer(stalling(STREAM_START)) as hostile:
        client = AsyncSilviaClient(
            base_url=hostile.url, token="t", idle_timeout=math.inf, deadline=math.inf
        )
        stream = await client.chat.stream("hi").__aenter__()
        two_events = asyncio.Event()
        got: list[ChatEvent] = []

        async def read() -> None:
            async for one in stream:
                got.append(one)
                if len(got) == 2:
                    two_events.set()

        reader = asyncio.create_task(read())
        await asyncio.wait_for(two_events.wait(), GUARD)
        await asyncio.sleep(0.2)
        await (stream if closer == "stream" else client).close()
        with pytest.raises(SilviaError) as caught:
            await asyncio.wait_for(reader, GUARD)
        await client.close()
    assert isinstance(caught.value, IncompleteTurnError)
    assert caught.value.turn.text == "Hello"


@pytest.mark.anyio
async def test_every_call_on_a_closed_client_is_a_client_closed_error(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    client = api.client()
    await api.close(client)
    for call in (lambda: api.turn(client), lambda: api.session(client, "s1")):
        with pytest.raises(ClientClosedError, match="closed"):
            await call()
    assert not server.calls


@pytest.mark.anyio
async def test_a_copy_closes_nothing_and_closes_with_its_original(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    client = api.client()
    copy = client.with_options(deadline=30)
    await api.close(copy)
    assert (await api.turn(copy)).complete  # the copy's close() did nothing
    assert (await api.turn(client)).complete
    await api.close(client)
    with pytest.raises(ClientClosedError):
        await api.turn(copy)


def test_a_pool_closed_under_the_client_is_a_client_closed_error(
    server: respx.MockRouter,
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    http = httpx.Client()
    client = SilviaClient(base_url="https://silvia.test", token="t", http_client=http)
    http.close()  # the caller closed their own pool
    with pytest.raises(ClientClosedError, match="pool is closed"):
        client.chat.send("hi")


def _twice_in_two_loops(url: str) -> str:
    """A turn in one `asyncio.run`, then one in another, on the same client: what the second
    raised ("" if it worked)."""
    client = AsyncSilviaClient(base_url=url, token="t")

    async def turn() -> bool:
        return (await client.chat.send("hi")).complete

    assert asyncio.run(turn())
    try:
        assert asyncio.run(turn())
    except ClientClosedError as error:  # a SilviaError that says why
        return str(error)
    return ""


def test_an_async_client_in_a_second_event_loop_says_why() -> None:
    with ReferenceServer().serve_loopback() as url:
        refused = _twice_in_two_loops(url)
        # The first loop's pooled connection cannot be closed once its loop has ended:
        # let it go here, quietly, rather than warn in whichever test runs next.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    assert "event loop" in refused  # refused before it is sent: `EventLoopChangedError`
