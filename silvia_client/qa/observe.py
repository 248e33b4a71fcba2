"""Observing a turn as the server sent it: each SSE event raw, beside the SDK's reading of it.

The checker must judge what the server sent, not what the SDK made of it: the
SDK reads every target through `parse_citation_target` (a bad one becomes
None) and makes a turn's citations agree with its final registry, so a `Turn`
no longer shows a malformed target or a target that changed mid-turn.

So the observer reads the stream with `ChatStream.iter_with_raw()`, which
gives every event as the server sent it (`RawEvent`: the raw name and data)
beside the typed event the SDK read from it. It records both, and that data
as JSON. One pass over the bytes: the raw and the typed views cannot disagree
about which event is which, and `observation.turn` is the `Turn` the stream
built. Like the client, it stops reading at `done` (or at an `error` event).
Each observation carries the turn's timings: the SDK's own (`Turn.timings`),
or, with `clock=` (a recording's arrival times), a `Stopwatch`'s (`_timing.py`).

The session is then reloaded the same way: its raw JSON body
(`client.sessions.get_raw`), and the SDK's `Session` read from it
(`parse_session`).

Everything goes through the given client's public API (its auth, timeouts,
deadline, limits, retries and wire format), with extra headers when asked,
e.g. the reference server's `x-silvia-scenario`. A failure keeps the request
id the server sent, when it sent one. With a `recorder` (a
`testing.RecordingTransport` under the client), the exchange is captured and
`observation.to_recording()` gives it.

`observe`, `reload_session` and `Observer` have async twins, line for line:
`aobserve`, `areload_session` and `AsyncObserver` (what `silvia qa run
--concurrency N` runs on). The values they make live in `_observation.py`.
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
    NOT_JSON,
    Observation,
    Reload,
    SentEvent,
    broke_off,
    json_value,
    no_stream,
    not_reloaded,
    observation_from_turn,
    reloaded,
)
from ._timing import Clock, Stopwatch, turn_timings

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..testing import Capture, RecordingTransport, ReferenceServer

__all__ = [
    "NOT_JSON",
    "AsyncObserver",
    "Observation",
    "Observer",
    "Reload",
    "SentEvent",
    "aobserve",
    "areload_session",
    "observation_from_turn",
    "observe",
    "reload_session",
]


# -- what the twins share --------------------------------------------------------------


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

    With `reload` (the default) the session is reloaded after a complete turn
    (an incomplete one may rightly not have been stored). `recorder`, the
    `RecordingTransport` under `client`, captures the exchange. `clock` times
    the turn instead of the SDK (for a replayed recording: its recorded
    times). Never raises for what the server does: failures are recorded on
    the observation.
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


class Observer:
    """Observes turns against one server: a base URL, or an in-process reference server.

    ::

        with Observer.reference() as qa:                      # no network
            observation = qa.observe("How much is in checking?", scenario="account")
        with Observer.connect("https://staging.example", token=..., record=True) as qa:
            observation = qa.observe("How much is in checking?")
        observation.to_recording().save("checking.jsonl")

    `scenario` is sent as the reference server's `x-silvia-scenario` header; a
    real server ignores it, so one script drives both. With `record=True` the
    observer's client sends through a `RecordingTransport` and every
    observation holds its exchange (`to_recording()`); such a transport
    connects directly, without the proxies of the environment.
    """

    def __init__(
        self,
        client: SilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http: httpx.Client | None = None  # an HTTP client this observer made, to close

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
        from ..testing import IN_PROCESS_URL, RecordingTransport, ReferenceServer

        server = server if server is not None else ReferenceServer()
        recorder = RecordingTransport(server.transport()) if record else None
        http = httpx.Client(transport=recorder or server.transport())
        client = SilviaClient(
            base_url=IN_PROCESS_URL,
            token=token or "qa-local",
            http_client=http,
            **_timeouts(timeout),
        )
        observer = cls(client, server=server, recorder=recorder)
        observer._http = http
        return observer

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

        if not record:
            return cls(SilviaClient(base_url=base_url, token=token, **_timeouts(timeout)))
        recorder = RecordingTransport()
        http = httpx.Client(transport=recorder)
        client = SilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        observer = cls(client, recorder=recorder)
        observer._http = http
        return observer

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


class AsyncObserver:
    """The async twin of `Observer`: `async with`, `await observer.observe(...)`."""

    def __init__(
        self,
        client: AsyncSilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http: httpx.AsyncClient | None = None  # an HTTP client this observer made

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
        from ..testing import IN_PROCESS_URL, RecordingTransport, ReferenceServer

        server = server if server is not None else ReferenceServer()
        recorder = RecordingTransport(server.transport()) if record else None
        http = httpx.AsyncClient(transport=recorder or server.transport())
        client = AsyncSilviaClient(
            base_url=IN_PROCESS_URL,
            token=token or "qa-local",
            http_client=http,
            **_timeouts(timeout),
        )
        observer = cls(client, server=server, recorder=recorder)
        observer._http = http
        return observer

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

        if not record:
            return cls(AsyncSilviaClient(base_url=base_url, token=token, **_timeouts(timeout)))
        recorder = RecordingTransport()
        http = httpx.AsyncClient(transport=recorder)
        client = AsyncSilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        observer = cls(client, recorder=recorder)
        observer._http = http
        return observer

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
