"""The observer: raw events beside the SDK's reading, the reload, how a turn fails, its
timings and captured recordings; `Observer` and `AsyncObserver` see every turn alike."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.chat import ChatEvent, CitationEvent, DoneEvent, SessionEvent, TextEvent, Timings
from silvia_client.qa import (
    TIMING,
    AsyncObserver,
    Observation,
    Observer,
    SentEvent,
    check,
    observation_from_turn,
    observe,
    observe_recording,
    reload_session,
)
from silvia_client.qa._observation import Stopwatch
from silvia_client.qa.observe import NOT_JSON
from silvia_client.qa.script import Expectations
from silvia_client.testing import BROKEN_SCENARIOS, Recording, ReferenceServer

from ..cli._cli import reference_turn
from ._helpers import run_cli, table, write_script


def test_each_event_is_recorded_raw_beside_its_typed_reading_and_the_turn_a_stream_builds() -> None:
    server = ReferenceServer()
    with Observer.reference(server=server) as qa:
        observation = qa.observe("How are my accounts?", scenario="broken-target-parses")
    expected = server.expected_turn("broken-target-parses")
    assert observation.complete
    assert observation.failure is None
    assert isinstance(observation.events[0].event, SessionEvent)
    assert isinstance(observation.events[-1].event, DoneEvent)
    citations = [sent for sent in observation.events if sent.name == "citation"]
    # The raw target the server sent, which the SDK's reading no longer holds.
    raw_targets = [sent.value["citation"].get("target") for sent in citations]
    assert raw_targets == [c.get("target") for c in expected.inline_citations]
    assert raw_targets[0] == {"kind": "account", "accountId": 4210, "provider": "plaid"}
    first = citations[0].event
    assert isinstance(first, CitationEvent)
    assert first.citation.target is None
    for sent in observation.events:
        assert sent.value == json.loads(sent.data)
    streamed = reference_turn("/scenario broken-target-parses")  # as the SDK reads it
    observed = observation.turn
    assert (observed.text, observed.citations) == (streamed.text, streamed.citations)
    dump = [c.model_dump() for c in observed.inline_citations]
    assert dump == [c.model_dump() for c in streamed.inline_citations]
    assert streamed.complete


def test_a_complete_turn_is_reloaded_raw_and_typed_and_a_failed_reload_recorded() -> None:
    with Observer.reference() as qa, Observer.reference() as other:
        observation = qa.observe("How are my accounts?", scenario="demo")
        unloaded = qa.observe("How are my accounts?", scenario="demo", reload=False)
        second = qa.observe("And Apple?", scenario="market-data", session_id=unloaded.session_id)
        malformed = qa.observe("hi", scenario="fault-malformed-json")
        # Reloaded from another server, which never saw the session.
        missing = reload_session(other.client, unloaded)
    reload = observation.reload
    assert reload is not None
    assert reload.error is None
    assert reload.session is not None
    assert reload.body["session"]["id"] == observation.session_id
    assert reload.session.messages[-1].citations
    assert unloaded.reload is None
    assert second.session_id == unloaded.session_id
    assert second.reload is not None
    assert len(second.reload.body["messages"]) == 4
    assert check(second).findings == ()
    assert missing.reload is not None
    said = "Session not found."  # the server's own words
    assert missing.reload.error == f"the reload failed: HTTP 404 (not_found_error): {said}"
    assert check(missing).broken_rules == {"reload-agrees"}
    (bad,) = [sent for sent in malformed.events if sent.value is NOT_JSON]
    assert bad.name == "citation"
    assert bad.data.startswith('{"citation"')


def test_how_a_turn_stops_short_is_recorded() -> None:
    stopped = {
        "fault-drop": "the connection dropped mid-stream (RemoteProtocolError)",
        "fault-error-event": "the server reported an error (overloaded_error); the turn stopped",
        "fault-no-done": "the stream ended without `done`",
        "status-500": "the chat request failed: HTTP 500 (api_error): Internal server error.",
        "fault-stall": "the stream stalled: no data for 0.05 s",
    }
    with Observer.reference(timeout=0.05) as qa:
        for scenario, failure in stopped.items():
            observation = qa.observe("hi", scenario=scenario)
            assert observation.failure == failure, scenario
            assert not observation.complete, scenario
            assert observation.reload is None, scenario  # an incomplete turn is not reloaded
            (finding,) = check(observation).findings
            assert (finding.rule, finding.message) == ("stream-complete", failure), scenario


def test_a_turn_can_be_checked_without_the_raw_events_and_rebuilt_with_its_providers() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("hi", scenario="broken-target-fits-source")
        good = qa.observe("hi", scenario="demo")
        cut = qa.observe("hi", scenario="fault-error-event")
        observed = qa.observe("How are my cards?", scenario="pooling")
    assert check(cut.turn).broken_rules == {"stream-complete"}
    assert good.reload is not None
    session = good.reload.session
    result = check(good.turn, session=session)
    assert result.findings == ()
    skipped = {o.rule.id for o in result.outcomes if o.status == "skip"}
    assert skipped == {"target-parses", "one-meaning-per-source", "event-order"}
    assert check(observation.turn).broken_rules == {"target-fits-source"}
    rebuilt = observation_from_turn(observation.turn)
    assert not rebuilt.raw
    assert rebuilt.complete
    # QA checks the rows the server sent, vendors included: its rebuilt rows ask for them.
    assert observed.reload is not None
    rebuilt = observation_from_turn(observed.turn, session=observed.reload.session)
    rows = [sent.value["citation"] for sent in rebuilt.events if sent.name == "citation"]
    targets = [c.target for c in observed.turn.inline_citations]
    assert [row.get("target") for row in rows] == [t and t.to_wire() for t in targets]
    assert rebuilt.reload is not None
    reloaded = [row for m in rebuilt.reload.body["messages"] for row in m["citations"]]
    assert '"provider": "plaid"' in json.dumps([rows, reloaded])


SSE = {"content-type": "text/event-stream"}


def mocked(response: httpx.Response) -> Observation:
    """`response`, observed through a client (no reload)."""
    transport = httpx.MockTransport(lambda request: response)
    with (
        httpx.Client(transport=transport) as http,
        SilviaClient(base_url="http://silvia.test", token="t", http_client=http) as client,
    ):
        return observe(client, "hi", reload=False)


def test_a_failed_request_keeps_its_request_id_and_a_huge_number_is_read_as_the_sdk_does() -> None:
    ids = {"x-request-id": "req_q"}
    sse = {**SSE, **ids}
    for response, failure in [
        (httpx.Response(401, json={"error": "no"}, headers=ids), "HTTP 401: no"),  # its words
        (
            httpx.Response(
                200, content=b'event: session\ndata: {"sessionId": "s1"}\n\n', headers=sse
            ),
            "the stream ended without `done`",
        ),
        (httpx.Response(200, text="<p>", headers=ids), "text/plain; charset=utf-8, not"),
        (httpx.Response(200, json={"answer": "hi"}, headers=ids), "200 application/json, not"),
    ]:
        observation = mocked(response)
        assert observation.failure is not None
        assert failure in observation.failure, observation.failure
        assert observation.request_id == "req_q", failure
        (finding,) = check(observation).findings
        assert finding.evidence["request_id"] == "req_q", failure
    # A huge number is read as the SDK reads it, not as data that is not JSON.
    huge = "9" * 5_000  # past `int`'s 4,300 digits: the SDK keeps it as a Decimal
    body = (
        f'event: session\ndata: {{"sessionId": "s1", "n": {huge}}}\n\n'
        f'event: citation\ndata: {{"citation": {{"source": "s", "target": {huge}}}}}\n\n'
        "event: done\ndata: {}\n\n"
    )
    observation = mocked(httpx.Response(200, headers=SSE, text=body))
    assert observation.events[0].value["n"] == Decimal(huge)
    (finding,) = check(observation).outcome("target-parses").findings
    assert finding.evidence["target"] == str(Decimal(huge)), "the evidence shows its digits"


SCENARIOS = ["demo", "pooling", "no-citations", "fault-drop", "fault-stall", "fault-error-event"]
SCENARIOS += ["fault-no-done", "fault-malformed-json", "status-401", "status-403", "status-500"]
SCENARIOS += sorted(BROKEN_SCENARIOS)


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


REPLAYED = {"demo", "fault-drop", "status-500", *BROKEN_SCENARIOS}


async def async_observation(scenario: str) -> Observation:
    server = ReferenceServer(deterministic=True)  # the same ids, session and message, each time
    async with AsyncObserver.reference(server=server, timeout=0.5, record=True) as qa:
        return await qa.observe("How are my accounts?", scenario=scenario)


def test_the_twins_observe_a_turn_alike_time_it_and_capture_it_and_name_refused_credentials(
    tmp_path: Path,
) -> None:
    for scenario in SCENARIOS:
        server = ReferenceServer(deterministic=True)
        with Observer.reference(server=server, timeout=0.5, record=True) as qa:
            observed = qa.observe("How are my accounts?", scenario=scenario)
        twins = {"Observer": observed, "AsyncObserver": asyncio.run(async_observation(scenario))}
        assert shape(twins["AsyncObserver"]) == shape(observed), scenario
        assert observed.request_id, scenario  # the reference server names every request
        for twin, observation in twins.items():
            case, timings = f"{twin}, {scenario}", observation.timings
            assert timings is not None, case
            if scenario in REPLAYED:  # a captured recording checks as the live turn
                path = tmp_path / f"{twin}-{scenario}.jsonl"
                observation.to_recording().save(path)
                replayed = observe_recording(Recording.load(path))
                assert shape(replayed) == shape(observation), case  # a broken one: its rule
                assert replayed.prompt == observation.prompt, case
                # The replayed timings are the recorded ones, not the replay's.
                assert replayed.timings is not None, case
                assert (replayed.timings.done is None) == (timings.done is None), case
            moments = (timings.first_byte, timings.first_text, timings.done)
            if scenario == "demo":
                assert None not in moments, case
                assert 0 <= moments[0] <= moments[1] <= moments[2], case  # type: ignore[operator]
            elif scenario == "fault-drop":  # text arrived, then the connection broke
                assert (moments[1] is not None, moments[2]) == (True, None), case
            failure = observation.access_failure
            if scenario not in ("status-401", "status-403"):
                # The server answered (a 500 too): a finding, not an access failure.
                assert failure is None, case
                continue
            assert moments == (None, None, None), case
            assert failure is not None, case
            assert failure.kind == "refused", case
            assert failure.request_id == observation.request_id, case
            assert f"HTTP {scenario[-3:]}" in failure.message, case
            assert f"request id {observation.request_id}" in failure.message, case


def test_a_recording_needs_capture_and_keeps_the_live_turns_times() -> None:
    with Observer.reference() as qa:
        observed = qa.observe("hi", scenario="demo")
    with pytest.raises(ValueError, match="capture was off"):
        observed.to_recording()
    with pytest.raises(ValueError, match="rebuilt from a Turn"):
        observation_from_turn(observed.turn).to_recording()
    # A paced server: each event arrives in its own chunk, at its own time.
    with Observer.reference(server=ReferenceServer(pace=0.02), record=True) as qa:
        live = qa.observe("hi", scenario="account")
    assert live.timings is live.turn.timings  # Turn.timings, as the SDK took them
    recording = live.to_recording()
    replayed = observe_recording(recording).timings
    assert replayed is not None
    assert replayed is not observe_recording(recording).turn.timings  # the replay's are ~0 s
    chunks = recording.response.chunks
    first_text = next(c.at for c in chunks if c.data.startswith(b"event: text"))
    done = next(c.at for c in chunks if c.data.startswith(b"event: done"))
    assert (replayed.first_byte, replayed.first_text, replayed.done) == (
        chunks[0].at,
        first_text,
        done,
    )


def test_the_stopwatch_notes_the_first_event_the_first_text_and_done() -> None:
    now = [100.0]
    watch = Stopwatch(lambda: now[0])
    assert watch.timings() == Timings(None, None, None)
    events: list[tuple[float, ChatEvent]] = [
        (100.5, SessionEvent(session_id="s")),
        (101.0, TextEvent(text="")),  # no text yet
        (101.25, TextEvent(text="Hi")),
        (102.0, TextEvent(text=" there")),
    ]
    for at, event in events:
        now[0] = at
        watch.event(event)
    assert watch.timings() == Timings(0.5, 1.25, None)  # a partial turn keeps these
    now[0] = 103.0
    watch.event(DoneEvent())
    assert watch.timings() == Timings(0.5, 1.25, 3.0)


def test_budgets_missed_are_warnings_unless_the_script_says_error_and_skip_without_timings() -> (
    None
):
    with Observer.reference(server=ReferenceServer(pace=0.01)) as qa:  # nothing takes 0 s
        observation = qa.observe("hi", scenario="account")
    assert check(observation, expect={"max_turn_s": 600, "max_first_text_s": 600}).ok
    tight = Expectations(max_first_text_s=1e-6, max_turn_s=1e-6)
    result = check(observation, expect=tight)
    outcome = result.outcome("timing")
    assert outcome.status == "warn"
    assert [f.severity for f in outcome.findings] == ["warning", "warning"]
    assert outcome.findings[0].message.startswith("the first text took ")
    assert outcome.findings[1].message.startswith("the whole turn took ")
    assert outcome.findings[1].evidence["budget_s"] == 1e-6
    assert result.ok  # unless the script says error, and no expectations row: the test below
    outcome = check(observation.turn, expect={"max_turn_s": 1e-6}).outcome(TIMING.id)
    assert outcome.status == "skip"
    assert outcome.reason == "no timings: the turn was not observed as it streamed"


def test_the_scripts_timing_in_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts: list[dict[str, object]] = [
        {"id": "slow", "message": "hi", "scenario": "account"},
        {"id": "lax", "message": "hi", "scenario": "account", "expect": {"max_first_text_s": 600}},
    ]
    for severity, status, cell in [("warning", 0, "warn"), ("error", 1, "FAIL")]:
        timing = {"max_first_text_s": 1e-9, "severity": severity}
        path = write_script(tmp_path / "s.json", prompts, timing=timing)
        report = tmp_path / "qa.json"
        code, out, _ = run_cli(["qa", "run", str(path), "--json", str(report)], capsys)
        assert code == status, severity
        cells = table(out)
        assert cells["timing"] == [cell, "pass"], severity
        assert "expectations" not in cells  # budgets alone
        timings = json.loads(report.read_text(encoding="utf-8"))["prompts"][0]["timings"]
        assert set(timings) == {"first_byte", "first_text", "done"}
        assert 0 <= timings["first_byte"] <= timings["first_text"] <= timings["done"]
        line = next(line for line in out.splitlines() if line.strip().startswith("1  slow  "))
        assert "[first text " in line  # the prompt list shows each prompt's timings
        assert ", done " in line
