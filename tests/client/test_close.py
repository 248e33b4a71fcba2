"""Close means closed (issue 20, finding 11): `close()` ends every stream the client opened, in
any thread, with the stream's error and its partial turn; any call after it raises
`ClientClosedError`, a `SilviaError`, never httpx's bare `RuntimeError`. An async client
serves one event loop, in the testing kit as in production (issue 28, finding 3): a second
one is refused with `EventLoopChangedError`. A close from another task: test_backends.py.
"""

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

from silvia_client import (
    AsyncSilviaClient,
    ClientClosedError,
    EventLoopChangedError,
    SilviaClient,
)
from silvia_client.chat import ChatEvent
from silvia_client.errors import IncompleteTurnError, StreamError
from silvia_client.testing import ReferenceServer

from ..hostile import HostileServer
from .conftest import Api
from .sse import CHAT_URL, full_turn, sse_response
from .test_deadline import GUARD, STREAM_START, stalling

SESSION_URL = "https://silvia.test/api/chat/sessions/s1"


def test_a_close_from_another_thread_ends_a_blocked_read() -> None:
    # The same from another task is in test_backends.py, under asyncio and trio.
    for closer in ("stream", "client"):
        _close_from_another_thread(closer)


def _close_from_another_thread(closer: str) -> None:
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
async def test_every_call_on_a_closed_client_is_a_client_closed_error_a_copys_close_is_none(
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
    # A pool its caller closed under the client.
    http = api.http()
    client = api.client(http_client=http)
    await api.call(http.aclose if isinstance(http, httpx.AsyncClient) else http.close)
    with pytest.raises(ClientClosedError, match="pool is closed"):
        await api.turn(client)


def second_loop(client: AsyncSilviaClient) -> tuple[type[BaseException], str] | None:
    """A turn in one `asyncio.run`, then one in another: what the second raised (its class
    and message: the error itself would keep the client, and its first loop's connection)."""

    async def turn() -> bool:
        return (await client.chat.send("hi")).complete

    assert asyncio.run(turn())
    try:
        asyncio.run(turn())
    except ClientClosedError as error:  # what code written before the new name catches
        return type(error), str(error)
    return None


def test_the_kit_and_production_refuse_a_second_event_loop_alike() -> None:
    server = ReferenceServer()
    with server.serve_loopback() as url:
        kit = second_loop(server.async_client())
        production = second_loop(AsyncSilviaClient(base_url=url, token="t"))
        # The first loop's pooled connection cannot be closed once its loop has ended:
        # let it go here, quietly, rather than warn in whichever test runs next.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    assert kit is not None
    assert kit == production
    assert kit[0] is EventLoopChangedError
    assert "one per asyncio.run" in kit[1]
    assert len(server.sessions) == 2  # one turn each: the second loop's was never sent


@pytest.mark.anyio
async def test_the_async_silvia_fixture_refuses_another_event_loop(
    async_silvia: AsyncSilviaClient,
) -> None:
    assert (await async_silvia.chat.send("hi")).complete
    with pytest.raises(EventLoopChangedError):
        await asyncio.to_thread(asyncio.run, async_silvia.chat.send("again"))
    assert (await async_silvia.chat.send("and on the test's loop")).complete
