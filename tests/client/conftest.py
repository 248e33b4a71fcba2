"""Fixtures of the client tests: a mocked server, the sync/async twin harness, recorded sleeps."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import httpx._transports.default as httpx_transports
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import ChatEvent, Turn
from silvia_client.errors import SilviaError
from silvia_client.sessions import Session

from .sse import BASE_URL, TOKEN

Client = SilviaClient | AsyncSilviaClient


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _one_ssl_context() -> Iterator[None]:
    """Build httpx's SSL context once, not per client (~25 ms each: most of this suite's time).

    No test here reaches the network, so the context is never used; every client
    the SDK builds still goes through httpx's own constructor.
    """
    context = httpx.create_ssl_context()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx_transports, "create_ssl_context", lambda *a, **k: context)
        yield


@pytest.fixture
def server() -> Iterator[respx.MockRouter]:
    """Every request is mocked; one that matches no route fails the test."""
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router


class Api:
    """One face for both clients, so that each scenario runs against the sync and the async one.

    The sync client is called directly (its mocked I/O never blocks); the async
    one is awaited. Helpers that read a turn return what arrived and the error,
    if any, so a test can check both.
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"
        self._clients: list[Client] = []

    def client(self, **kwargs: Any) -> Client:
        kwargs.setdefault("base_url", BASE_URL)
        kwargs.setdefault("token", TOKEN)
        client: Client = AsyncSilviaClient(**kwargs) if self.is_async else SilviaClient(**kwargs)
        self._clients.append(client)
        return client

    async def read(
        self, client: Client, message: str = "hi", **kwargs: Any
    ) -> tuple[list[ChatEvent], SilviaError | None]:
        """Iterate a whole turn: the events that arrived, and the error that ended it, if any."""
        events: list[ChatEvent] = []
        try:
            if isinstance(client, AsyncSilviaClient):
                async with client.chat.stream(message, **kwargs) as astream:
                    async for event in astream:
                        events.append(event)
            else:
                with client.chat.stream(message, **kwargs) as stream:
                    for event in stream:
                        events.append(event)
        except SilviaError as error:
            return events, error
        return events, None

    async def turn(self, client: Client, message: str = "hi", **kwargs: Any) -> Turn:
        """`until_done()` inside `with`."""
        if isinstance(client, AsyncSilviaClient):
            async with client.chat.stream(message, **kwargs) as astream:
                return await astream.until_done()
        with client.chat.stream(message, **kwargs) as stream:
            return stream.until_done()

    async def session(self, client: Client, session_id: str) -> Session:
        if isinstance(client, AsyncSilviaClient):
            return await client.sessions.get(session_id)
        return client.sessions.get(session_id)

    async def request(self, client: Client, endpoint: str) -> object:
        """One chat turn (`endpoint="chat"`) or one `sessions.get("s1")`."""
        if endpoint == "chat":
            return await self.turn(client)
        return await self.session(client, "s1")

    async def close(self, client: Client) -> None:
        if isinstance(client, AsyncSilviaClient):
            await client.close()
        else:
            client.close()

    async def aclose_all(self) -> None:
        for client in self._clients:
            await self.close(client)


@pytest.fixture(params=["sync", "async"])
async def api(request: pytest.FixtureRequest) -> AsyncIterator[Api]:
    harness = Api(request.param)
    yield harness
    await harness.aclose_all()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry waits, recorded instead of slept (`time.sleep`, and `anyio.sleep` for async)."""
    recorded: list[float] = []

    def sleep(seconds: float) -> None:
        recorded.append(seconds)

    async def asleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(anyio, "sleep", asleep)
    return recorded
