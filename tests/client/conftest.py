"""Fixtures of the client tests: a mocked server, the sync/async twin harness, recorded sleeps.

`Api` runs one scenario against either client (`Stream`: either's chat stream, one async face);
`no_alarm` and `started_call` serve the tests of decisions made without I/O (retries,
deadlines, guards); `once` and `by_case`, the tests that need a hostile server.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import httpx
import httpx._transports.default as httpx_transports
import pytest
import respx

from silvia_client import AsyncChatStream, AsyncSilviaClient, ChatStream, SilviaClient
from silvia_client._deadline import Call, Guard, Kind, RequestOptions
from silvia_client.chat import ChatEvent, RawEvent, Turn
from silvia_client.errors import SilviaError
from silvia_client.sessions import Session

from ..hostile import Connection, HostileServer, Request, Respond
from .sse import BASE_URL, TOKEN

Client = SilviaClient | AsyncSilviaClient


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _one_ssl_context() -> Iterator[None]:
    """httpx's SSL context built once, not per client (~25 ms each: most of this suite's time);
    no test here reaches the network, and every client still goes through httpx's constructor.
    """
    context = httpx.create_ssl_context()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx_transports, "create_ssl_context", lambda *a, **k: context)
        yield


def no_alarm(at: float, callback: Callable[[], None]) -> Callable[[], None]:
    """An alarm clock whose alarms never go off."""
    return lambda: None


def started_call(kind: Kind = "get", left: float = 120.0) -> Call:
    """A call with a deadline of 120 s, `left` of them still to go, its guard without alarms."""
    call = Call(
        RequestOptions(
            kind,
            headers=httpx.Headers(),
            timeout=httpx.Timeout(5.0),
            idle_timeout=9.0,
            deadline=120.0,
            max_event_bytes=1,
            max_response_bytes=1,
            max_values=1,
            extra_body={},
            extra_query={},
        )
    )
    call.at = time.monotonic() + left
    call.guard = Guard(no_alarm)
    return call


def once(answer: bytes) -> Respond:
    """A server's answer to every request: `answer`."""

    def respond(request: Request, connection: Connection) -> None:
        connection.send(answer)

    return respond


def by_case(responders: dict[str, Respond]) -> HostileServer:
    """One server for many cases (a server's stop takes up to 0.2 s), each request answered as
    its `x-case` header says."""

    def respond(request: Request, connection: Connection) -> None:
        responders[request.headers["x-case"]](request, connection)

    return HostileServer(respond)


@pytest.fixture
def server() -> Iterator[respx.MockRouter]:
    """Every request is mocked; one that matches no route fails the test."""
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router


async def settled(result: Any) -> Any:
    """`result` of a method of either client: awaited if it is awaitable."""
    return await result if inspect.isawaitable(result) else result


class Stream:
    """A chat stream of either client, read through one async face (`raw` is the stream)."""

    def __init__(self, raw: ChatStream | AsyncChatStream) -> None:
        self.raw = raw
        self._events: Any = None  # the one iterator, kept so that reading can go on later

    async def __aenter__(self) -> Stream:
        if isinstance(self.raw, AsyncChatStream):
            await self.raw.__aenter__()
        else:
            self.raw.__enter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if isinstance(self.raw, AsyncChatStream):
            await self.raw.__aexit__(*exc)
        else:
            self.raw.__exit__(*exc)

    async def next(self) -> ChatEvent:
        """The next event (there must be one), from the same iterator each time."""
        if isinstance(self.raw, AsyncChatStream):
            self._events = self._events or aiter(self.raw)
            return await anext(self._events)
        self._events = self._events or iter(self.raw)
        return next(self._events)  # type: ignore[no-any-return]

    async def events(self, into: list[ChatEvent] | None = None) -> list[ChatEvent]:
        """Every event left, put in `into` as each comes (kept if reading fails)."""
        events = [] if into is None else into
        if isinstance(self.raw, AsyncChatStream):
            async for event in self.raw:
                events.append(event)
        else:
            for event in self.raw:
                events.append(event)
        return events

    async def texts(self) -> list[str]:
        if isinstance(self.raw, AsyncChatStream):
            return [delta async for delta in self.raw.text_stream]
        return list(self.raw.text_stream)

    async def with_raw(
        self, pairs: list[tuple[RawEvent, ChatEvent]] | None = None
    ) -> list[tuple[RawEvent, ChatEvent]]:
        """Every (raw, event) pair left, put in `pairs` as each comes (kept if reading fails)."""
        pairs = [] if pairs is None else pairs
        if isinstance(self.raw, AsyncChatStream):
            async for pair in self.raw.aiter_with_raw():
                pairs.append(pair)
        else:
            for pair in self.raw.iter_with_raw():
                pairs.append(pair)
        return pairs

    async def until_done(self) -> Turn:
        return await settled(self.raw.until_done())  # type: ignore[no-any-return]

    async def close(self) -> None:
        await settled(self.raw.close())


class Api:
    """One face for both clients, so that each scenario runs against the sync and the async one
    (the sync one called directly: its mocked I/O never blocks)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"
        self._clients: list[Client] = []
        self._https: list[httpx.Client | httpx.AsyncClient] = []

    def client(self, **kwargs: Any) -> Client:
        kwargs.setdefault("base_url", BASE_URL)
        kwargs.setdefault("token", TOKEN)
        client: Client = AsyncSilviaClient(**kwargs) if self.is_async else SilviaClient(**kwargs)
        self._clients.append(client)
        return client

    def http(self, **kwargs: Any) -> httpx.Client | httpx.AsyncClient:
        """An httpx client of the kind this client takes, closed at the end of the test."""
        http = httpx.AsyncClient(**kwargs) if self.is_async else httpx.Client(**kwargs)
        self._https.append(http)
        return http

    def stream(self, client: Client, message: str = "hi", **kwargs: Any) -> Stream:
        """`client.chat.stream(...)`, not entered yet: `async with api.stream(client) as s`."""
        return Stream(client.chat.stream(message, **kwargs))

    async def call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`method(*args, **kwargs)`, a method of either client; awaited for the async one."""
        return await settled(method(*args, **kwargs))

    async def read(
        self, client: Client, message: str = "hi", **kwargs: Any
    ) -> tuple[list[ChatEvent], SilviaError | None]:
        """Iterate a whole turn: the events that arrived, and the error that ended it, if any."""
        events: list[ChatEvent] = []
        try:
            async with self.stream(client, message, **kwargs) as stream:
                await stream.events(events)
        except SilviaError as error:
            return events, error
        return events, None

    async def turn(self, client: Client, message: str = "hi", **kwargs: Any) -> Turn:
        """`until_done()` inside `with`."""
        async with self.stream(client, message, **kwargs) as stream:
            return await stream.until_done()

    async def session(self, client: Client, session_id: str) -> Session:
        return await self.call(client.sessions.get, session_id)  # type: ignore[no-any-return]

    async def request(self, client: Client, endpoint: str, **kwargs: Any) -> object:
        """One chat turn (`endpoint="chat"`) or one `sessions.get("s1")`, with `kwargs`."""
        if endpoint == "chat":
            return await self.turn(client, **kwargs)
        return await self.call(client.sessions.get, "s1", **kwargs)

    async def close(self, client: Client) -> None:
        await self.call(client.close)

    async def aclose_all(self) -> None:
        for client in self._clients:
            await self.close(client)
        for http in self._https:
            await self.call(http.aclose if isinstance(http, httpx.AsyncClient) else http.close)


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
