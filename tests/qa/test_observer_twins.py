"""The observer's twins, timings, access failures and captured recordings.

`Observer` and `AsyncObserver` see the same turn the same way, for every kind
of turn the reference server plays; each observation carries its timings and,
with `record=True`, the exchange as a `Recording` that checks the same.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from silvia_client.qa import (
    AsyncObserver,
    Observation,
    Observer,
    SentEvent,
    check,
    observation_from_turn,
    observe_recording,
)
from silvia_client.testing import BROKEN_SCENARIOS, Recording, ReferenceServer

SCENARIOS = [
    "demo",
    "pooling",
    "no-citations",
    "fault-drop",
    "fault-stall",
    "fault-error-event",
    "fault-no-done",
    "fault-malformed-json",
    "status-401",
    "status-403",
    "status-500",
    *sorted(BROKEN_SCENARIOS),
]


def _without_message_id(sent: SentEvent) -> object:
    # The model's message id is made afresh for every turn, even on a deterministic server.
    if sent.name == "message" and isinstance(sent.value, dict):
        return {key: value for key, value in sent.value.items() if key != "id"}
    return sent.data


def shape(observation: Observation) -> tuple[object, ...]:
    """What two observations of one scenario must share (timings and request ids aside)."""
    reload = observation.reload
    return (
        [(sent.name, _without_message_id(sent)) for sent in observation.events],
        observation.turn.text,
        [c.model_dump() for c in observation.turn.inline_citations],
        [c.model_dump() for c in observation.turn.citations],
        observation.complete,
        observation.failure,
        None if reload is None else (reload.error, reload.session is not None),
        None if observation.access_failure is None else observation.access_failure.kind,
        sorted(check(observation).broken_rules),
    )


def sync_observation(scenario: str, *, record: bool = False) -> Observation:
    server = ReferenceServer(deterministic=True)  # the same ids, session and message, each time
    with Observer.reference(server=server, timeout=0.5, record=record) as qa:
        return qa.observe("How are my accounts?", scenario=scenario)


def async_observation(scenario: str, *, record: bool = False) -> Observation:
    async def run() -> Observation:
        server = ReferenceServer(deterministic=True)
        async with AsyncObserver.reference(server=server, timeout=0.5, record=record) as qa:
            return await qa.observe("How are my accounts?", scenario=scenario)

    return asyncio.run(run())


TWINS = {"Observer": sync_observation, "AsyncObserver": async_observation}


def test_the_twins_observe_a_turn_alike() -> None:
    for scenario in SCENARIOS:
        observed = sync_observation(scenario)
        assert shape(async_observation(scenario)) == shape(observed), scenario
        assert observed.request_id, scenario  # the reference server names every request


def test_timings_are_in_order_and_a_partial_turn_keeps_its_own() -> None:
    for twin, observation in TWINS.items():
        complete = observation("demo").timings
        assert complete is not None, twin
        assert complete.first_byte is not None, twin
        assert complete.first_text is not None, twin
        assert complete.done is not None, twin
        assert 0 <= complete.first_byte <= complete.first_text <= complete.done, twin
        dropped = observation("fault-drop").timings  # text arrived, then the connection broke
        assert dropped is not None, twin
        assert (dropped.first_text is not None, dropped.done) == (True, None), twin
        refused = observation("status-401").timings
        assert refused is not None, twin
        assert (refused.first_byte, refused.first_text, refused.done) == (None, None, None), twin


def test_refused_credentials_are_an_access_failure_with_the_request_id() -> None:
    for twin, observation in TWINS.items():
        for status in (401, 403):
            case = f"{twin}, {status}"
            observed = observation(f"status-{status}")
            failure = observed.access_failure
            assert failure is not None, case
            assert failure.kind == "refused", case
            assert observed.request_id, case
            assert failure.request_id == observed.request_id, case
            assert f"HTTP {status}" in failure.message, case
            assert f"request id {observed.request_id}" in failure.message, case
        # The server answered: a finding, not an access failure.
        assert observation("status-500").access_failure is None, twin


def test_no_server_is_an_access_failure_of_its_own() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Observer.connect(f"http://127.0.0.1:{port}", token="t", timeout=2) as qa:
        observed = qa.observe("hi")
    assert observed.access_failure is not None
    assert observed.access_failure.kind == "unreachable"
    assert "no request id" in observed.access_failure.message


def test_a_captured_recording_checks_as_the_live_turn(tmp_path: Path) -> None:
    for twin, observation in TWINS.items():
        for scenario in ["demo", "fault-drop", "broken-reload-agrees", "status-500"]:
            case = f"{twin}, {scenario}"
            live = observation(scenario, record=True)
            path = tmp_path / f"{twin}-{scenario}.jsonl"
            live.to_recording().save(path)
            replayed = observe_recording(Recording.load(path))
            assert shape(replayed) == shape(live), case
            # The replayed timings are the recorded ones, not the replay's.
            assert replayed.timings is not None, case
            assert live.timings is not None, case
            assert (replayed.timings.done is None) == (live.timings.done is None), case


def test_without_capture_there_is_no_recording() -> None:
    observed = sync_observation("demo")
    with pytest.raises(ValueError, match="capture was off"):
        observed.to_recording()
    with pytest.raises(ValueError, match="rebuilt from a Turn"):
        observation_from_turn(observed.turn).to_recording()


def test_the_recorded_clock_gives_the_recorded_times() -> None:
    # A paced server: each event arrives in its own chunk, at its own time.
    server = ReferenceServer(pace=0.05)
    with Observer.reference(server=server, record=True) as qa:
        live = qa.observe("hi", scenario="account")
    recording = live.to_recording()
    replayed = observe_recording(recording).timings
    assert replayed is not None
    chunks = recording.response.chunks
    times = [chunk.at for chunk in chunks]
    first_text = next(c.at for c in chunks if c.data.startswith(b"event: text"))
    done = next(c.at for c in chunks if c.data.startswith(b"event: done"))
    assert (replayed.first_byte, replayed.first_text, replayed.done) == (
        times[0],
        first_text,
        done,
    )
