"""An async client serves one event loop, in the testing kit as in production (issue 28, finding 3).

Before, `ReferenceServer().async_client()` worked across two `asyncio.run()` calls
while a production `AsyncSilviaClient` failed on the second: a suite on the kit was
green where the service broke. Now both raise `EventLoopChangedError` (a
`ClientClosedError`) on the second loop, before anything is sent.
"""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from silvia_client import AsyncSilviaClient, ClientClosedError, EventLoopChangedError, errors
from silvia_client.testing import ReferenceServer


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


def test_the_new_error_is_public_and_a_client_closed_error() -> None:
    assert errors.EventLoopChangedError is EventLoopChangedError
    assert issubclass(EventLoopChangedError, ClientClosedError)
    assert "EventLoopChangedError" in errors.__all__
