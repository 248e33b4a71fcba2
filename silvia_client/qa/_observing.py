"""Observing turns through a client: each SSE event raw, beside the SDK's reading of it.

The checker judges what the server sent, not what the SDK made of it (a malformed
target is None in a `Turn`): `observe` reads the stream with `iter_with_raw()`, in one
pass, then reloads the session the same way (`sessions.get_raw`, `parse_session`),
all through the client's public API. A `recorder` (a `testing.RecordingTransport`
under the client) captures the exchange; a `clock` (a recording's) times the turn.

`Observer` / `AsyncObserver` hold a client on one server and send a prompt's scenario
as the `x-silvia-scenario` header, which a real server ignores. The async twins mirror
the sync ones; what does no I/O (`_Observing`, `_Observers`) is written once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx

from .. import AsyncSilviaClient, SilviaClient
from ..chat import Turn
from ..errors import SilviaError, StreamError
from ._observation import (
    AccessFailure,
    Clock,
    Observation,
    SentEvent,
    Stopwatch,
    access_failure,
    json_value,
    not_reloaded,
    reloaded,
    request_failure,
    stream_failure,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..chat import ChatEvent, RawEvent
    from ..testing import Capture, RecordingTransport, ReferenceServer


class _Observing:
    """One turn being observed: the events so far, and the observation they make."""

    def __init__(self, client: SilviaClient | AsyncSilviaClient, message: str, clock: Clock | None):
        self.client = client
        self.message = message
        self.events: list[SentEvent] = []
        self.watch = Stopwatch(clock) if clock is not None else None

    def sent(self, raw: RawEvent, event: ChatEvent) -> None:
        if self.watch is not None:
            self.watch.event(event)
        self.events.append(SentEvent(raw.name, raw.data, json_value(raw.data), event))

    def done(
        self,
        turn: Turn,
        request_id: str | None,
        failure: str | None = None,
        access: AccessFailure | None = None,
    ) -> Observation:
        # Timed by the stopwatch when there is one (a recording), else by the SDK.
        timings = self.watch.timings() if self.watch is not None else turn.timings
        return Observation(
            self.message,
            tuple(self.events),
            turn,
            failure=failure,
            request_id=request_id,
            wire=self.client.wire,
            timings=timings,
            access_failure=access,
        )

    def failed(self, error: SilviaError, session_id: str | None) -> Observation:
        if isinstance(error, StreamError):  # stopped before `done`: what arrived, and why
            failure = stream_failure(error, self.client.idle_timeout)
            return self.done(error.turn, error.request_id, failure)
        # No event stream (an HTTP error, no connection, ...)
        request_id = getattr(error, "request_id", None)
        self.events.clear()
        turn, failure = Turn(session_id=session_id), request_failure(error)
        return self.done(turn, request_id, failure, access_failure(error))

    @staticmethod
    def recorded(observation: Observation, capture: Capture | None) -> Observation:
        recording = capture.recording() if capture is not None else None
        return observation if recording is None else replace(observation, recording=recording)


# -- sync ------------------------------------------------------------------------------


def observe(
    client: SilviaClient,
    message: str,
    *,
    session_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    reload: bool = True,
    recorder: RecordingTransport | None = None,
    clock: Clock | None = None,
) -> Observation:
    """Send one chat turn through `client` and record what the server sent.

    With `reload`, the session is reloaded after a complete turn (an incomplete
    one may rightly not be stored). Never raises for what the server does:
    failures are recorded on the observation.
    """
    turn = _Observing(client, message, clock)
    with recorder.capture() if recorder is not None else nullcontext() as capture:
        try:
            with client.chat.stream(
                message, session_id=session_id, extra_headers=headers
            ) as stream:
                for raw, event in stream.iter_with_raw():
                    turn.sent(raw, event)
                observation = turn.done(stream.until_done(), stream.request_id)
        except SilviaError as error:
            observation = turn.failed(error, session_id)
        else:
            if reload and observation.complete and observation.session_id:
                observation = reload_session(client, observation)
    return turn.recorded(observation, capture)


def reload_session(client: SilviaClient, observation: Observation) -> Observation:
    """`observation` with its session reloaded (raw body and the SDK's reading)."""
    if not observation.session_id:
        return not_reloaded(observation, None)
    try:
        body = client.sessions.get_raw(observation.session_id)
    except SilviaError as error:
        return not_reloaded(observation, error)
    return reloaded(observation, body, observation.session_id)


# -- async -----------------------------------------------------------------------------


async def aobserve(
    client: AsyncSilviaClient,
    message: str,
    *,
    session_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    reload: bool = True,
    recorder: RecordingTransport | None = None,
    clock: Clock | None = None,
) -> Observation:
    """The async twin of `observe`, through an `AsyncSilviaClient`."""
    turn = _Observing(client, message, clock)
    with recorder.capture() if recorder is not None else nullcontext() as capture:
        try:
            async with client.chat.stream(
                message, session_id=session_id, extra_headers=headers
            ) as stream:
                async for raw, event in stream.aiter_with_raw():
                    turn.sent(raw, event)
                observation = turn.done(await stream.until_done(), stream.request_id)
        except SilviaError as error:
            observation = turn.failed(error, session_id)
        else:
            if reload and observation.complete and observation.session_id:
                observation = await areload_session(client, observation)
    return turn.recorded(observation, capture)


async def areload_session(client: AsyncSilviaClient, observation: Observation) -> Observation:
    """The async twin of `reload_session`."""
    if not observation.session_id:
        return not_reloaded(observation, None)
    try:
        body = await client.sessions.get_raw(observation.session_id)
    except SilviaError as error:
        return not_reloaded(observation, error)
    return reloaded(observation, body, observation.session_id)


# -- the observers ---------------------------------------------------------------------


_CONNECT_TIMEOUT = 10.0  # the client's own default


def _scenario_headers(scenario: str | None) -> dict[str, str] | None:
    from ..testing import SCENARIO_HEADER

    return {SCENARIO_HEADER: scenario} if scenario else None


_Client = TypeVar("_Client", SilviaClient, AsyncSilviaClient)
_Http = TypeVar("_Http", httpx.Client, httpx.AsyncClient)


class _Observers(Generic[_Client, _Http]):
    """What both observers share: their parts and how they are made."""

    client: _Client
    _http: _Http | None  # an HTTP client this observer made, to close
    _classes: tuple[Callable[..., _Client], type[_Http]]  # what it makes them of

    def __init__(
        self,
        client: _Client,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
        http: _Http | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http = http

    @classmethod
    def _open(
        cls, base_url: str, token: str | None, transport: Any, timeout: float | None
    ) -> tuple[_Client, _Http | None]:
        client_class, http_class = cls._classes
        http = http_class(transport=transport) if transport is not None else None
        options: dict[str, Any] = {}
        if timeout is not None:
            connect = min(timeout, _CONNECT_TIMEOUT)
            options = {"timeout": httpx.Timeout(timeout, connect=connect), "idle_timeout": timeout}
        return client_class(base_url=base_url, token=token, http_client=http, **options), http

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Self:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL, RecordingTransport, ReferenceServer

        server = server if server is not None else ReferenceServer()
        recorder = RecordingTransport(server.transport()) if record else None
        transport = recorder or server.transport()
        client, http = cls._open(IN_PROCESS_URL, token or "qa-local", transport, timeout)
        return cls(client, server=server, recorder=recorder, http=http)

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Self:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        from ..testing import RecordingTransport

        recorder = RecordingTransport() if record else None
        client, http = cls._open(base_url, token, recorder, timeout)
        return cls(client, recorder=recorder, http=http)

    @property
    def base_url(self) -> str:
        return self.client.base_url


class Observer(_Observers[SilviaClient, httpx.Client]):
    """Observes turns against one server: a base URL, or an in-process reference server.

    ::

        with Observer.reference() as qa:                      # no network
            observation = qa.observe("How much is in checking?", scenario="account")
        with Observer.connect("https://staging.example", token=..., record=True) as qa:
            observation = qa.observe("How much is in checking?")
        observation.to_recording().save("checking.jsonl")

    With `record=True` every observation holds its exchange (`to_recording()`);
    the recording transport connects directly, without the environment's proxies.
    """

    _classes = (SilviaClient, httpx.Client)

    def observe(
        self,
        message: str,
        *,
        scenario: str | None = None,
        session_id: str | None = None,
        reload: bool = True,
    ) -> Observation:
        """One turn, observed (and its session reloaded, when it completed)."""
        return observe(
            self.client,
            message,
            session_id=session_id,
            headers=_scenario_headers(scenario),
            reload=reload,
            recorder=self.recorder,
        )

    def close(self) -> None:
        """Close the client, and the HTTP client this observer made, if it made one."""
        self.client.close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncObserver(_Observers[AsyncSilviaClient, httpx.AsyncClient]):
    """The async twin of `Observer`: `async with`, `await observer.observe(...)`."""

    _classes = (AsyncSilviaClient, httpx.AsyncClient)

    async def observe(
        self,
        message: str,
        *,
        scenario: str | None = None,
        session_id: str | None = None,
        reload: bool = True,
    ) -> Observation:
        """One turn, observed (and its session reloaded, when it completed)."""
        return await aobserve(
            self.client,
            message,
            session_id=session_id,
            headers=_scenario_headers(scenario),
            reload=reload,
            recorder=self.recorder,
        )

    async def aclose(self) -> None:
        """Close the client, and the HTTP client this observer made, if it made one."""
        await self.client.close()
        if self._http is not None:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
