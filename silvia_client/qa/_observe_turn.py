"""Observing one turn through a client: each SSE event raw, beside the SDK's reading of it.

The checker must judge what the server sent, not what the SDK made of it: the
SDK reads every target through `parse_citation_target`, so a malformed target
becomes None in a `Turn`, and the checks must see what it was. (The rows
themselves are kept as sent: a target that changed mid-turn shows in the
`Turn` too.)

So `observe` reads the stream with `ChatStream.iter_with_raw()`, which gives
every event as the server sent it (`RawEvent`: the raw name and data) beside
the typed event the SDK read from it. It records both, and that data as JSON.
One pass over the bytes: the raw and the typed views cannot disagree about
which event is which, and `observation.turn` is the `Turn` the stream built.
Like the client, it stops reading at `done` (or at an `error` event). Each
observation carries the turn's timings: the SDK's own (`Turn.timings`), or,
with `clock=` (a recording's arrival times), a `Stopwatch`'s (`_timing.py`).

The session is then reloaded the same way (`reload_session`): its raw JSON
body (`client.sessions.get_raw`), and the SDK's `Session` read from it
(`parse_session`).

Everything goes through the given client's public API (its auth, timeouts,
deadline, limits, retries and wire format), with extra headers when asked,
e.g. the reference server's `x-silvia-scenario`. A failure keeps the request
id the server sent, when it sent one. With a `recorder` (a
`testing.RecordingTransport` under the client), the exchange is captured and
`observation.to_recording()` gives it.

`aobserve` and `areload_session` are the async twins, line for line. The
observers that hold a client for these are in `_observer.py`; the values they
make, in `_observation.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

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
    from ..testing import Capture, RecordingTransport

__all__ = ["aobserve", "areload_session", "observe", "reload_session"]


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
