"""`silvia qa check FILE...` and `check_recordings`: every rule over recorded turns, no server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from silvia_client.qa import RULES, RunResult, check, check_recordings, observe_recording
from silvia_client.testing import (
    BROKEN_RULES,
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    Recording,
    RecordingFormatError,
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


def test_a_recorded_broken_turn_breaks_the_same_rule_as_live() -> None:
    for scenario, rule in BROKEN_RULES.items():
        assert check(observe_recording(recorded(scenario))).broken_rules == {rule}, scenario


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


def request_id(recording: Recording) -> str:
    return dict(recording.response.headers)["x-request-id"]


def without_request_id(recording: Recording) -> Recording:
    headers = tuple((n, v) for n, v in recording.response.headers if n != "x-request-id")
    return replace(recording, response=replace(recording.response, headers=headers))


def ids(run: RunResult) -> list[str]:
    return [result.prompt.id for result in run.prompts]


def test_check_recordings_takes_bare_recordings_named_by_their_request_id() -> None:
    good, bad = recorded("demo"), recorded("broken-target-parses")
    run = check_recordings([good, bad])
    assert ids(run) == [request_id(good), request_id(bad)]
    assert [result.result.ok for result in run.prompts] == [True, False]
    assert ids(check_recordings(good)) == [request_id(good)]  # one alone


def test_a_bare_recording_without_a_request_id_is_recording_n_by_its_place() -> None:
    good = recorded("demo")
    anonymous = without_request_id(good)
    run = check_recordings([good, anonymous, ("named", good), anonymous])
    assert ids(run) == [request_id(good), "recording-2", "named", "recording-4"]


def test_check_recordings_takes_paths_named_by_their_stem(tmp_path: Path) -> None:
    good = save(tmp_path, "good.turn", recorded("demo"))
    summary = tmp_path / "summary.jsonl"
    recorded("broken-summary-agrees").save(summary)
    run = check_recordings([good, summary])  # a str and an os.PathLike
    assert ids(run) == ["good.turn", "summary"]
    assert [result.result.ok for result in run.prompts] == [True, False]
    assert ids(check_recordings(summary)) == ["summary"]
    assert ids(check_recordings(str(summary))) == ["summary"]  # a path, not its characters


def test_a_path_that_is_not_a_recording_raises_what_load_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(RecordingFormatError) as caught:
        check_recordings([recorded("demo"), bad])
    assert caught.value.path == str(bad)
    with pytest.raises(FileNotFoundError):
        check_recordings([tmp_path / "nope.jsonl"])


def test_check_recordings_still_takes_pairs_and_mappings_and_mixes_them(tmp_path: Path) -> None:
    good, bad = recorded("demo"), recorded("broken-target-parses")
    path = save(tmp_path, "saved", good)
    assert ids(check_recordings({"a": good, "b": bad})) == ["a", "b"]
    assert ids(check_recordings(("one pair", good))) == ["one-pair"]
    assert ids(check_recordings((good, bad))) == [request_id(good), request_id(bad)]
    run = check_recordings([("pair", good), {"m1": good, "m2": bad}, path, bad])
    assert ids(run) == ["pair", "m1", "m2", "saved", request_id(bad)]
    assert run.target == "5 recording(s), no server"
    # A two-item list still reads as a pair, as the unpacking before it did (untyped).
    listed: list[object] = [["listed pair", bad]]
    assert ids(check_recordings(listed)) == ["listed-pair"]  # type: ignore[arg-type]
    assert ids(check_recordings(iter([good]))) == [request_id(good)]  # any iterable
    assert ids(check_recordings([])) == []


def test_the_same_name_twice_gets_a_suffix_so_each_keeps_its_row(tmp_path: Path) -> None:
    good = recorded("demo")
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    paths = [save(first, "turn", good), save(second, "turn", good)]
    run = check_recordings([*paths, ("turn", good), good, good])
    assert ids(run) == ["turn", "turn-2", "turn-3", request_id(good), f"{request_id(good)}-2"]
    # The first to come keeps the name, whether it was given or made up.
    anonymous = without_request_id(good)
    given_first = check_recordings([("recording-2", good), anonymous])
    assert ids(given_first) == ["recording-2", "recording-2-2"]
    made_up_first = check_recordings([anonymous, ("recording-1", good)])
    assert ids(made_up_first) == ["recording-1", "recording-1-2"]


WRONG_SHAPES = [
    (42, "got int"),
    (None, "got NoneType"),
    (b"turn.jsonl", "got bytes"),
    ([42], "got int (item 1)"),
    ([("name", "not a recording")], "got a pair of str and str (item 1)"),
    ([(1, "x", "y")], "got tuple (item 1)"),
    ({"name": "turn.jsonl"}, "got a pair of str and str (item 1 (a mapping))"),
    ({7: "x"}, "got a pair of int and str (item 1 (a mapping))"),
    ([[b"turn.jsonl"]], "got list (item 1)"),
]


def test_a_wrong_shape_is_a_type_error_saying_what_it_takes() -> None:
    for recordings, got in WRONG_SHAPES:
        with pytest.raises(TypeError) as caught:
            check_recordings(recordings)  # type: ignore[arg-type]
        message = str(caught.value)
        assert message.startswith(
            "check_recordings takes recordings, paths to recording files (str or os.PathLike), "
            "(name, Recording) pairs or mappings of names to recordings"
        ), got
        assert message.endswith(got), got


def test_a_wrong_item_fails_before_any_turn_is_replayed(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"got int \(item 3\)"):
        check_recordings([recorded("demo"), tmp_path / "never-read.jsonl", 3])  # type: ignore[list-item]


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


def test_a_file_that_is_not_a_recording_or_not_there_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    for content, message in [
        ('{"type": "recording", "format": "silvia-recording", "version": 99}\n', "version"),
        ("not json at all\n", "line 1"),
        ("", "truncated"),
    ]:
        path.write_text(content, encoding="utf-8")
        status, out, err = run_cli(["qa", "check", str(path)], capsys)
        assert (status, out) == (2, ""), message
        assert err.startswith(f"silvia qa: {path}: "), message
        assert message in err.lower(), message
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
