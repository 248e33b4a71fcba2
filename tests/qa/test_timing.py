"""Timings: taken as the turn streams, checked against the script's budgets, shown in reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silvia_client.chat import DoneEvent, SessionEvent, TextEvent, Timings
from silvia_client.qa import (
    TIMING,
    Observation,
    Observer,
    check,
    observation_from_turn,
    observe_recording,
)
from silvia_client.qa._observation import Stopwatch
from silvia_client.qa.script import Expectations
from silvia_client.testing import ReferenceServer

from ._cli import run_cli, table, write_script


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_stopwatch_notes_the_first_event_the_first_text_and_done() -> None:
    clock = FakeClock()
    watch = Stopwatch(clock)
    assert watch.timings() == Timings(None, None, None)
    clock.now = 100.5
    watch.event(SessionEvent(session_id="s"))
    clock.now = 101.0
    watch.event(TextEvent(text=""))  # no text yet
    clock.now = 101.25
    watch.event(TextEvent(text="Hi"))
    clock.now = 102.0
    watch.event(TextEvent(text=" there"))
    assert watch.timings() == Timings(0.5, 1.25, None)  # a partial turn keeps these
    clock.now = 103.0
    watch.event(DoneEvent())
    assert watch.timings() == Timings(0.5, 1.25, 3.0)


def _observed(pace: float = 0.0) -> Observation:
    with Observer.reference(server=ReferenceServer(pace=pace)) as qa:
        return qa.observe("hi", scenario="account")


def test_budgets_missed_are_warnings_unless_the_script_says_error() -> None:
    observation = _observed(pace=0.01)  # every event after a pause: nothing takes 0 s
    assert check(observation, expect={"max_turn_s": 600, "max_first_text_s": 600}).ok
    tight = Expectations(max_first_text_s=1e-6, max_turn_s=1e-6)
    result = check(observation, expect=tight)
    outcome = result.outcome("timing")
    assert outcome.status == "warn"
    assert [f.severity for f in outcome.findings] == ["warning", "warning"]
    assert outcome.findings[0].message.startswith("the first text took ")
    assert outcome.findings[1].message.startswith("the whole turn took ")
    assert outcome.findings[1].evidence["budget_s"] == 1e-6
    assert result.ok
    strict = Expectations(max_turn_s=1e-6, timing_severity="error")
    assert check(observation, expect=strict).outcome("timing").status == "fail"
    with pytest.raises(KeyError):  # timing budgets alone add no `expectations` row
        check(observation, expect=strict).outcome("expectations")


def test_a_turn_without_timings_skips_the_rule() -> None:
    observation = observation_from_turn(_observed().turn)
    outcome = check(observation, expect={"max_turn_s": 1e-6}).outcome(TIMING.id)
    assert outcome.status == "skip"
    assert outcome.reason == "no timings: the turn was not observed as it streamed"


@pytest.mark.parametrize(
    ("severity", "status", "cell"), [("warning", 0, "warn"), ("error", 1, "FAIL")]
)
def test_the_scripts_timing_in_a_run(
    severity: str,
    status: int,
    cell: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "timing": {"max_first_text_s": 1e-9, "severity": severity},
                "prompts": [
                    {"id": "slow", "message": "hi", "scenario": "account"},
                    {
                        "id": "lax",
                        "message": "hi",
                        "scenario": "account",
                        "expect": {"max_first_text_s": 600},
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    report = tmp_path / "qa.json"
    code, out, _ = run_cli(["qa", "run", str(path), "--json", str(report)], capsys)
    assert code == status
    cells = table(out)
    assert cells["timing"] == [cell, "pass"]
    assert "expectations" not in cells  # budgets alone
    data = json.loads(report.read_text(encoding="utf-8"))
    timings = data["prompts"][0]["timings"]
    assert set(timings) == {"first_byte", "first_text", "done"}
    assert 0 <= timings["first_byte"] <= timings["first_text"] <= timings["done"]
    assert "first text " in out.splitlines()[3]  # the prompt list shows each prompt's timings


def test_timings_in_the_prompt_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path / "s.json", [{"id": "p", "message": "hi", "scenario": "demo"}])
    _, out, _ = run_cli(["qa", "run", str(script)], capsys)
    line = next(line for line in out.splitlines() if line.strip().startswith("1  p  "))
    assert "[first text " in line
    assert ", done " in line


def test_a_live_turn_is_timed_by_the_sdk_a_recorded_one_by_its_recording() -> None:
    with Observer.reference(server=ReferenceServer(pace=0.01), record=True) as qa:
        live = qa.observe("hi", scenario="account")
    assert live.timings is live.turn.timings  # Turn.timings, as the SDK took them
    replayed = observe_recording(live.to_recording())
    assert replayed.timings is not None
    assert replayed.timings is not replayed.turn.timings  # the replay's own would be ~0 s
    recorded_done = next(
        chunk.at for chunk in live.to_recording().response.chunks if b"event: done" in chunk.data
    )
    assert replayed.timings.done == recorded_done
