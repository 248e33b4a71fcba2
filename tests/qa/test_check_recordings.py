"""`silvia qa check FILE...` and `check_recordings`: every rule over recorded turns, no server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from silvia_client.qa import RULES, RunResult, check_recordings
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    Recording,
    RecordingFormatError,
    ReferenceServer,
    record_turn,
)

from ._helpers import cases, report, run_cli, table, write_script


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


def request_id(recording: Recording) -> str:
    return dict(recording.response.headers)["x-request-id"]


def without_request_id(recording: Recording) -> Recording:
    headers = tuple((n, v) for n, v in recording.response.headers if n != "x-request-id")
    return replace(recording, response=replace(recording.response, headers=headers))


def ids(run: RunResult) -> list[str]:
    return [result.prompt.id for result in run.prompts]


def test_each_recording_is_a_prompt_named_by_its_name_request_id_stem_or_place(
    tmp_path: Path,
) -> None:
    good, bad = recorded("demo"), recorded("broken-target-parses")
    g, b, anonymous = request_id(good), request_id(bad), without_request_id(good)
    run = check_recordings([("good turn", good), ("x", bad), ("x", bad)])
    assert ids(run) == ["good-turn", "x", "x-2"]
    assert [result.result.ok for result in run.prompts] == [True, False, False]
    assert (run.exit_status, run.target) == (1, "3 recording(s), no server")
    path, summary = save(tmp_path, "good.turn", good), tmp_path / "summary.jsonl"
    recorded("broken-summary-agrees").save(summary)
    run = check_recordings([path, summary])  # a str and an os.PathLike, named by their stem
    assert ids(run) == ["good.turn", "summary"]
    assert [result.result.ok for result in run.prompts] == [True, False]
    (tmp_path / "a").mkdir()
    again = save(tmp_path / "a", "good.turn", good)
    listed: list[object] = [["listed pair", bad]]  # a two-item list reads as a pair (untyped)
    for recordings, named in [
        ([good, bad], [g, b]),
        (good, [g]),
        ((good, bad), [g, b]),
        (iter([good]), [g]),  # any iterable
        ([], []),
        ([good, anonymous, ("named", good), anonymous], [g, "recording-2", "named", "recording-4"]),
        (summary, ["summary"]),
        (str(summary), ["summary"]),  # a path, not its characters
        ({"a": good, "b": bad}, ["a", "b"]),
        (("one pair", good), ["one-pair"]),
        (listed, ["listed-pair"]),
        (
            [("pair", good), {"m1": good, "m2": bad}, path, bad],
            ["pair", "m1", "m2", "good.turn", b],
        ),
        # The same name twice gets a suffix; the first to come keeps it, given or made up.
        (
            [path, again, ("good.turn", good), good, good],
            ["good.turn", "good.turn-2", "good.turn-3", g, f"{g}-2"],
        ),
        ([("recording-2", good), anonymous], ["recording-2", "recording-2-2"]),
        ([anonymous, ("recording-1", good)], ["recording-1", "recording-1-2"]),
    ]:
        assert ids(check_recordings(recordings)) == named, named  # type: ignore[arg-type]


def test_what_is_not_a_recording_raises_saying_what_check_recordings_takes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(RecordingFormatError) as caught:
        check_recordings([recorded("demo"), bad])
    assert caught.value.path == str(bad)
    with pytest.raises(FileNotFoundError):
        check_recordings([tmp_path / "nope.jsonl"])
    for recordings, got in WRONG_SHAPES:
        with pytest.raises(TypeError) as wrong:
            check_recordings(recordings)  # type: ignore[arg-type]
        message = str(wrong.value)
        assert message.startswith(
            "check_recordings takes recordings, paths to recording files (str or os.PathLike), "
            "(name, Recording) pairs or mappings of names to recordings"
        ), got
        assert message.endswith(got), got
    # Before any turn is replayed, or any file read.
    with pytest.raises(TypeError, match=r"got int \(item 3\)"):
        check_recordings([recorded("demo"), tmp_path / "never-read.jsonl", 3])  # type: ignore[list-item]


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


def test_warnings_alone_exit_0_a_recorded_refusal_is_a_finding_a_bad_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = save(tmp_path, "vendor", recorded("broken-no-vendor-names"))
    status, out, _ = run_cli(["qa", "check", path], capsys)
    assert status == 0
    assert table(out)["no-vendor-names"] == ["warn"]
    path = save(tmp_path, "refused", recorded("status-401"))
    status, out, _ = run_cli(["qa", "check", path], capsys)
    assert status == 1  # a recorded refusal is a finding: no server is refusing anything now
    assert table(out)["stream-complete"] == ["FAIL"]
    assert "HTTP 401" in out
    bad = tmp_path / "bad.jsonl"
    for content, message in [
        ('{"type": "recording", "format": "silvia-recording", "version": 99}\n', "version"),
        ("not json at all\n", "line 1"),
        ("", "truncated"),
    ]:
        bad.write_text(content, encoding="utf-8")
        status, out, err = run_cli(["qa", "check", str(bad)], capsys)
        assert (status, out) == (2, ""), message
        assert err.startswith(f"silvia qa: {bad}: "), message
        assert message in err.lower(), message
    status, _, err = run_cli(["qa", "check", str(tmp_path / "nope.jsonl")], capsys)
    assert status == 2
    assert err.startswith("silvia qa: cannot read ")


def test_qa_run_record_saves_every_prompt_and_qa_check_judges_and_reports_them_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts: list[dict[str, object]] = [
        {"id": "good", "message": "Cards?", "scenario": "accounts"},
        {"id": "drop", "message": "Cards?", "scenario": "fault-drop"},
        {"id": "bad", "message": "Apple?", "scenario": "broken-reload-agrees"},
        {"id": "refused", "message": "Hi", "scenario": "status-500"},
        {"id": "vendor", "message": "Hi", "scenario": "broken-no-vendor-names"},
    ]
    script = write_script(tmp_path / "s.json", prompts)
    saved = tmp_path / "turns" / "today"
    status, live, _ = run_cli(["qa", "run", str(script), "--record", str(saved)], capsys)
    assert status == 1
    names = sorted(path.name for path in saved.iterdir())
    assert names == ["bad.jsonl", "drop.jsonl", "good.jsonl", "refused.jsonl", "vendor.jsonl"]
    files = [str(saved / f"{prompt['id']}.jsonl") for prompt in prompts]
    junit, path_json = tmp_path / "qa.xml", tmp_path / "qa.json"
    argv = ["qa", "check", *files, "--junit", str(junit), "--json", str(path_json)]
    status, again, err = run_cli(argv, capsys)
    assert (status, err) == (1, "")
    assert table(again) == table(live)
    assert table(again)["no-vendor-names"][-1] == "warn"
    assert again.startswith("silvia qa: 5 prompt(s) against 5 recording(s), no server")
    data = report(path_json)
    assert [prompt["id"] for prompt in data["prompts"]] == [p["id"] for p in prompts]
    assert data["exit_status"] == 1
    assert len(cases(junit)) == 5 * len(RULES)
