"""`silvia qa check FILE...` and `check_recordings`: every rule over recorded turns, no server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from silvia_client.qa import RULES, check, check_recordings, observe_recording
from silvia_client.testing import (
    BROKEN_RULES,
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    Recording,
    ReferenceServer,
    record_turn,
)

from ._cli import run_cli, table


def recorded(scenario: str, message: str = "How are my accounts?") -> Recording:
    server = ReferenceServer()
    return record_turn(
        message,
        transport=server.transport(),
        base_url=IN_PROCESS_URL,
        token="t",
        default_headers={SCENARIO_HEADER: scenario},
        idle_timeout=0.5,
    )


def save(tmp_path: Path, name: str, recording: Recording) -> str:
    path = tmp_path / f"{name}.jsonl"
    recording.save(path)
    return str(path)


@pytest.mark.parametrize("scenario", sorted(BROKEN_RULES))
def test_a_recorded_broken_turn_breaks_the_same_rule_as_live(scenario: str) -> None:
    observation = observe_recording(recorded(scenario))
    assert check(observation).broken_rules == {BROKEN_RULES[scenario]}


def test_a_recording_is_observed_as_it_was_sent_reload_included() -> None:
    recording = recorded("pooling", "Where do my cards stand?")
    observation = observe_recording(recording)
    assert observation.prompt == "Where do my cards stand?"
    assert observation.complete
    assert observation.reload is not None
    assert observation.reload.session is not None
    assert observation.events[0].name == "session"
    assert check(observation).ok


def test_check_recordings_is_a_run_with_a_prompt_per_recording() -> None:
    good, bad = recorded("demo"), recorded("broken-target-parses")
    run = check_recordings([("good turn", good), ("x", bad), ("x", bad)])
    assert [result.prompt.id for result in run.prompts] == ["good-turn", "x", "x-2"]
    assert [result.result.ok for result in run.prompts] == [True, False, False]
    assert run.exit_status == 1
    assert run.target == "3 recording(s), no server"


def test_qa_check_prints_the_table_and_writes_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [
        save(tmp_path, "good", recorded("demo")),
        save(tmp_path, "summary", recorded("broken-summary-agrees")),
        save(tmp_path, "vendor", recorded("broken-no-vendor-names")),
    ]
    junit, report = tmp_path / "qa.xml", tmp_path / "qa.json"
    status, out, err = run_cli(
        ["qa", "check", *files, "--junit", str(junit), "--json", str(report)], capsys
    )
    assert status == 1
    assert err == ""
    cells = table(out)
    assert cells["summary-agrees"] == ["pass", "FAIL", "pass"]
    assert cells["no-vendor-names"] == ["pass", "pass", "warn"]
    assert out.startswith("silvia qa: 3 prompt(s) against 3 recording(s), no server")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [prompt["id"] for prompt in data["prompts"]] == ["good", "summary", "vendor"]
    assert data["exit_status"] == 1
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == 3 * len(RULES)


def test_warnings_alone_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = save(tmp_path, "vendor", recorded("broken-no-vendor-names"))
    status, out, _ = run_cli(["qa", "check", path], capsys)
    assert status == 0
    assert table(out)["no-vendor-names"] == ["warn"]


def test_a_recorded_failure_is_a_finding_with_its_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = save(tmp_path, "refused", recorded("status-401"))
    status, out, _ = run_cli(["qa", "check", path], capsys)
    assert status == 1  # a recorded refusal is a finding: no server is refusing anything now
    assert table(out)["stream-complete"] == ["FAIL"]
    assert "HTTP 401" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"type": "recording", "format": "silvia-recording", "version": 99}\n', "version"),
        ("not json at all\n", "line 1"),
        ("", "truncated"),
    ],
)
def test_a_file_that_is_not_a_recording_is_a_usage_error(
    content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    status, out, err = run_cli(["qa", "check", str(path)], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith(f"silvia qa: {path}: ")
    assert message in err.lower()
    assert "Traceback" not in err


def test_a_missing_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_cli(["qa", "check", str(tmp_path / "nope.jsonl")], capsys)
    assert status == 2
    assert err.startswith("silvia qa: cannot read ")


def test_qa_run_record_saves_every_prompt_and_qa_check_judges_them_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts: list[dict[str, object]] = [
        {"id": "good", "message": "Cards?", "scenario": "accounts"},
        {"id": "drop", "message": "Cards?", "scenario": "fault-drop"},
        {"id": "bad", "message": "Apple?", "scenario": "broken-reload-agrees"},
        {"id": "refused", "message": "Hi", "scenario": "status-500"},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"prompts": prompts}), encoding="utf-8")
    saved = tmp_path / "turns" / "today"
    status, live, _ = run_cli(["qa", "run", str(script), "--record", str(saved)], capsys)
    assert status == 1
    files = sorted(path.name for path in saved.iterdir())
    assert files == ["bad.jsonl", "drop.jsonl", "good.jsonl", "refused.jsonl"]
    recorded = [str(saved / f"{prompt['id']}.jsonl") for prompt in prompts]
    status, again, _ = run_cli(["qa", "check", *recorded], capsys)
    assert status == 1
    assert table(again) == table(live)
