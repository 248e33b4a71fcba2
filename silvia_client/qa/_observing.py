"""Observing turns through a client: each SSE event raw, beside the SDK's reading of it.

The checker judges what the server sent, not what the SDK made of it (a malformed
target is None in a `Turn`). So `observe` reads the stream with
`ChatStream.iter_with_raw()`: every event as sent beside the typed event, in one
pass, and `observation.turn` is the `Turn` the stream built. The session is then
reloaded the same way (`client.sessions.get_raw`, then `parse_session`).
Everything goes through the client's public API. With a `recorder` (a
`testing.RecordingTransport` under the client) the exchange is captured;
with `clock` (a recording's arrival times) a `Stopwatch` times the turn.

`Observer` / `AsyncObserver` hold a client on one server (`reference()`: an
in-process reference server; `connect(base_url)`: a real one) and send a
prompt's scenario as the `x-silvia-scenario` header, which a real server ignores.
The async twins (`aobserve`, `areload_session`, `AsyncObserver`) mirror the sync ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from .. import AsyncSilviaClient, SilviaClient
from ..errors import SilviaError, StreamError
from ._observation import (
    Clock,
    Observation,
    SentEvent,
    Stopwatch,
    broke_off,
    json_value,
    no_stream,
    not_reloaded,
    reloaded,
    turn_timings,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..testing import Capture, InProcessTransport, RecordingTransport, ReferenceServer


@contextmanager
def _capturing(recorder: RecordingTransport | None) -> Iterator[Capture | None]:
    if recorder is None:
        yield None
        return
    with recorder.capture() as capture:
        yield capture


def _with_recording(observation: Observation, capture: Capture | None) -> Observation:
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
    with _capturing(recorder) as capture:
        observation = _observe(client, message, session_id, headers, reload, clock)
    return _with_recording(observation, capture)


def _observe(
    client: SilviaClient,
    message: str,
    session_id: str | None,
    headers: Mapping[str, str] | None,
    reload: bool,
    clock: Clock | None,
) -> Observation:
    wire = client.wire
    events: list[SentEvent] = []
    watch = Stopwatch(clock) if clock is not None else None
    try:
        with client.chat.stream(message, session_id=session_id, extra_headers=headers) as stream:
            request_id = stream.request_id
            for raw, event in stream.iter_with_raw():
                if watch is not None:
                    watch.event(event)
                events.append(SentEvent(raw.name, raw.data, json_value(raw.data), event))
            turn = stream.until_done()
    except StreamError as error:
        return broke_off(message, events, error, client.idle_timeout, wire, watch)
    except SilviaError as error:  # before any event
        return no_stream(message, session_id, error, wire, watch)
    observation = Observation(
        message,
        tuple(events),
        turn,
        request_id=request_id,
        wire=wire,
        timings=turn_timings(turn, watch),
    )
    if reload and observation.complete and observation.session_id:
        observation = reload_session(client, observation)
    return observation


def reload_session(client: SilviaClient, observation: Observation) -> Observation:
    """`observation` with its session reloaded (raw body and the SDK's reading)."""
    session_id = observation.session_id
    if not session_id:
        return not_reloaded(observation, None)
    try:
        body = client.sessions.get_raw(session_id)
    except SilviaError as error:
        return not_reloaded(observation, error)
    return reloaded(observation, body, session_id)


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
    with _capturing(recorder) as capture:
        observation = await _aobserve(client, message, session_id, headers, reload, clock)
    return _with_recording(observation, capture)


async def _aobserve(
    client: AsyncSilviaClient,
    message: str,
    session_id: str | None,
    headers: Mapping[str, str] | None,
    reload: bool,
    clock: Clock | None,
) -> Observation:
    wire = client.wire
    events: list[SentEvent] = []
    watch = Stopwatch(clock) if clock is not None else None
    try:
        async with client.chat.stream(
            message, session_id=session_id, extra_headers=headers
        ) as stream:
            request_id = stream.request_id
            async for raw, event in stream.aiter_with_raw():
                if watch is not None:
                    watch.event(event)
                events.append(SentEvent(raw.name, raw.data, json_value(raw.data), event))
            turn = await stream.until_done()
    except StreamError as error:
        return broke_off(message, events, error, client.idle_timeout, wire, watch)
    except SilviaError as error:  # before any event
        return no_stream(message, session_id, error, wire, watch)
    observation = Observation(
        message,
        tuple(events),
        turn,
        request_id=request_id,
        wire=wire,
        timings=turn_timings(turn, watch),
    )
    if reload and observation.complete and observation.session_id:
        observation = await areload_session(client, observation)
    return observation


async def areload_session(client: AsyncSilviaClient, observation: Observation) -> Observation:
    """The async twin of `reload_session`."""
    session_id = observation.session_id
    if not session_id:
        return not_reloaded(observation, None)
    try:
        body = await client.sessions.get_raw(session_id)
    except SilviaError as error:
        return not_reloaded(observation, error)
    return reloaded(observation, body, session_id)


# -- the observers ---------------------------------------------------------------------


_CONNECT_TIMEOUT = 10.0  # the client's own default


def _timeouts(timeout: float | None) -> dict[str, Any]:
    if timeout is None:
        return {}
    return {
        "timeout": httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)),
        "idle_timeout": timeout,
    }


def _scenario_headers(scenario: str | None) -> dict[str, str] | None:
    from ..testing import SCENARIO_HEADER

    return {SCENARIO_HEADER: scenario} if scenario else None


def _reference(
    server: ReferenceServer | None, record: bool
) -> tuple[ReferenceServer, RecordingTransport | None, InProcessTransport | RecordingTransport]:
    """A reference server (a fresh one unless given), its recorder, the transport to it."""
    from ..testing import RecordingTransport, ReferenceServer

    server = server if server is not None else ReferenceServer()
    recorder = RecordingTransport(server.transport()) if record else None
    return server, recorder, recorder or server.transport()


class Observer:
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

    def __init__(
        self,
        client: SilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http = http  # an HTTP client this observer made, to close

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Observer:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL

        server, recorder, transport = _reference(server, record)
        http = httpx.Client(transport=transport)
        token = token or "qa-local"
        client = SilviaClient(
            base_url=IN_PROCESS_URL, token=token, http_client=http, **_timeouts(timeout)
        )
        return cls(client, server=server, recorder=recorder, http=http)

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Observer:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        from ..testing import RecordingTransport

        recorder = RecordingTransport() if record else None
        http = httpx.Client(transport=recorder) if recorder is not None else None
        client = SilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        return cls(client, recorder=recorder, http=http)

    @property
    def base_url(self) -> str:
        return self.client.base_url

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


class AsyncObserver:
    """The async twin of `Observer`: `async with`, `await observer.observe(...)`."""

    def __init__(
        self,
        client: AsyncSilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http = http  # an HTTP client this observer made, to close

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> AsyncObserver:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL

        server, recorder, transport = _reference(server, record)
        http = httpx.AsyncClient(transport=transport)
        token = token or "qa-local"
        client = AsyncSilviaClient(
            base_url=IN_PROCESS_URL, token=token, http_client=http, **_timeouts(timeout)
        )
        return cls(client, server=server, recorder=recorder, http=http)

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> AsyncObserver:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        from ..testing import RecordingTransport

        recorder = RecordingTransport() if record else None
        http = httpx.AsyncClient(transport=recorder) if recorder is not None else None
        client = AsyncSilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        return cls(client, recorder=recorder, http=http)

    @property
    def base_url(self) -> str:
        return self.client.base_url

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
