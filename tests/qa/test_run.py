"""`silvia qa run` and `arun_script`: the table, progress, exit codes, the JUnit and JSON
reports, prompts not run, a run that stops short (Ctrl-C 130, a server refusing or missing 3),
and the same run whatever `--concurrency`. Then `silvia qa check FILE...` and
`check_recordings`: every rule over recorded turns, no server."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from silvia_client.cli import main
from silvia_client.cli.qa import LiveProgress
from silvia_client.qa import (
    RULES,
    AsyncObserver,
    Observation,
    Observer,
    RunResult,
    ScriptFormatError,
    arun_script,
    check_recordings,
    load_script,
    parse_script,
    run_script,
)
from silvia_client.testing import BROKEN_SCENARIOS, Recording, RecordingFormatError, ReferenceServer

from ..cli._cli import Tty
from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head
from ..interruptible import silvia_command
from ..testing._helpers import recorded
from ._helpers import EXAMPLE, cases, report, run_cli, table, write_script

RULE_IDS = [rule.id for rule in RULES]
TOKEN = "qa-run-s3cret-token"


def test_rules_lists_every_rule_and_the_example_passes_on_the_reference_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run_cli(["qa", "rules"], capsys)
    assert status == 0
    listed = [line.split(maxsplit=2) for line in out.splitlines()]
    assert [row[0] for row in listed] == [*RULE_IDS, "expectations", "timing"]
    assert [row[1] for row in listed] == [rule.severity for rule in RULES] + ["error", "warning"]
    # Over 127.0.0.1 (the embedded server's own line: tests/cli/test_chat.py).
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    server = ReferenceServer(token=TOKEN)
    with server.serve_loopback() as url:
        status, out, err = run_cli(["qa", "run", EXAMPLE, "--base-url", url], capsys)
    assert status == 0
    assert out.startswith(f"silvia qa: 12 prompt(s) against {url}")
    assert len(server.sessions) == 11  # one prompt continues the session before it
    cells = table(out)
    assert list(cells) == [*RULE_IDS, "expectations"]
    assert {cell for row in cells.values() for cell in row} == {"pass"}
    assert len(cells["target-parses"]) == 12
    chosen, *progress = err.splitlines()
    assert chosen == f"silvia qa run: using {url} (from --base-url)"
    assert len(progress) == 12
    assert progress[0] == "[1/12] overview: ok (0 error(s), 0 warning(s))"
    assert out.rstrip().endswith("ok: 0 error(s), 0 warning(s) over 12 prompt(s) and 12 rule(s)")


USAGE_ERRORS: list[tuple[list[str], dict[str, str], str]] = [
    (["missing.json"], {}, "cannot read"),
    ([EXAMPLE, "--base-url", "http://127.0.0.1:9"], {}, "set SILVIA_TOKEN"),
    ([EXAMPLE], {"SILVIA_BASE_URL": "http://127.0.0.1:9"}, "set SILVIA_TOKEN"),
    (["one.json", "--json", "."], {}, "cannot write a report"),  # after the run, reported
]


def test_usage_errors_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_script(tmp_path / "one.json", [{"message": "hi"}])
    for args, env, message in USAGE_ERRORS:
        with monkeypatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            status, out, err = run_cli(["qa", "run", *args], capsys)
        assert status == 2, (args, env)
        assert message in err, (args, env)
        ran = message == "cannot write a report"
        assert ("ok: 0 error(s)" in out) if ran else (out == ""), (args, env)
    # Argparse's errors: tests/cli/test_arguments.py; a bad URL: tests/cli/test_chat.py.
    assert run_cli(["qa"], capsys)[0] == 2


# Not run, and a run that stops short ----------------------------------------------------


def test_a_misspelled_scenario_is_one_finding_with_the_servers_words_and_the_rest_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "Unknown scenario 'acounts'; `silvia serve --list` lists them."
    typo = {"id": "typo", "message": "Hi", "scenario": "acounts"}
    prompts: list[dict[str, Any]] = [
        {"id": "good", "message": "Hi", "scenario": "demo"},
        {**typo, "expect": {"cites_account": True, "max_turn_s": 30}},
        {"id": "bad", "message": "Hi", "scenario": "broken-target-parses"},
    ]
    script = write_script(tmp_path / "s.json", prompts)
    junit, path = tmp_path / "r.xml", tmp_path / "r.json"
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        argv = ["qa", "run", str(script), "--base-url", url, "--junit", str(junit)]
        status, out, err = run_cli([*argv, "--json", str(path)], capsys)
    assert status == 1
    cells = table(out)
    assert cells["stream-complete"][1] == "FAIL"
    # Never "pass" for a turn that never ran: expectations and timing included.
    assert {row[1] for rule, row in cells.items() if rule != "stream-complete"} == {"n/r"}
    assert {"expectations", "timing"} <= set(cells)
    (finding,) = [line for line in out.splitlines() if "[typo]" in line]
    assert f"HTTP 400 (invalid_request_error): {said}" in finding
    assert "prompts: 1 passed, 1 failed, 1 did not run" in out
    (progress,) = [line for line in err.splitlines() if line.startswith("[2/3] typo: ")]
    assert progress.startswith(
        f"[2/3] typo: not run: the chat request failed: HTTP 400 (invalid_request_error): {said}"
        " (request "
    )
    assert ".;" not in err

    data = report(path)
    assert (data["failed"], data["not_run"]) == (1, 1)
    not_run = data["prompts"][1]
    assert not_run["status"] == "not_run"
    assert said in not_run["not_run"]
    assert [finding["message"] for finding in not_run["findings"]] == [not_run["not_run"]]
    statuses = {rule: value["status"] for rule, value in not_run["rules"].items()}
    assert statuses.pop("stream-complete") == "fail"
    assert set(statuses.values()) == {"not_run"}
    assert data["prompts"][2]["status"] == "fail"

    typos = [case for case in cases(junit) if case.get("classname") == "silvia.qa.typo"]
    errors = [case.find("error") for case in typos if case.find("error") is not None]
    assert len(errors) == 1
    assert said in (errors[0].get("message") or "")  # type: ignore[union-attr]
    assert all(case.find("failure") is None for case in typos)
    assert sum(case.find("skipped") is not None for case in typos) == len(typos) - 1
    assert 'errors="1"' in junit.read_text(encoding="utf-8")


def _stop_line(err: str) -> str:
    (line,) = [line for line in err.splitlines() if line.startswith("silvia qa: stopped: ")]
    return line


def test_a_server_refusing_the_token_or_not_there_stops_the_run_with_status_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts: list[dict[str, Any]] = [
        {"id": "p1", "message": "Hi", "expect": {"complete": True, "max_turn_s": 30}},
        *({"id": f"p{n}", "message": "Hi", "scenario": "account"} for n in (2, 3, 4)),
    ]
    script, path = write_script(tmp_path / "s.json", prompts), tmp_path / "qa.json"
    server = ReferenceServer(token="the-right-" + TOKEN)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    with server.serve_loopback() as url:
        monkeypatch.setenv("SILVIA_BASE_URL", url)
        for concurrency in ("1", "4"):
            argv = ["qa", "run", str(script), "--json", str(path), "--concurrency", concurrency]
            status, out, err = run_cli(argv, capsys)
            assert status == 3, concurrency
            data = report(path)
            failure = data["access_failure"]
            assert failure["kind"] == "refused"
            request_id = failure["request_id"]
            assert request_id
            assert _stop_line(err).startswith(
                "silvia qa: stopped: the server refused the credentials (HTTP 401 "
                f"authentication_error, request id {request_id}); check SILVIA_TOKEN; "
            )
            ran = [prompt for prompt in data["prompts"] if prompt["ran"]]
            assert 1 <= len(ran) <= int(concurrency)  # none started once the refusal came
            refused = next(prompt for prompt in ran if prompt["request_id"] == request_id)
            assert [f["rule"] for f in refused["findings"]] == ["stream-complete"]
            assert {f["request_id"] for f in refused["findings"]} == {request_id}
            assert refused["status"] == "not_run"
            assert (data["not_run"], data["failed"], data["exit_status"]) == (4, 0, 3)
            assert out.rstrip().splitlines()[-1].startswith("STOPPED: ")
            assert TOKEN not in out + err + path.read_text(encoding="utf-8")
            if concurrency == "1":  # one cause, one finding; every other cell not run
                cells = table(out)
                # (Every other cell n/r, as for a misspelled scenario: the test above.)
                assert cells["stream-complete"] == ["FAIL", "n/r", "n/r", "n/r"]
                assert "HTTP 401 (authentication_error): " in out
                assert "prompts: 0 passed, 0 failed, 4 did not run" in out
                assert len([line for line in out.splitlines() if line.startswith("FAIL  ")]) == 1
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    status, _, err = run_cli(["qa", "run", EXAMPLE, "--base-url", url, "--json", str(path)], capsys)
    assert status == 3
    assert _stop_line(err).startswith(
        "silvia qa: stopped: cannot reach the server (ConnectError, no request id); 12 did not run"
    )
    assert "[2/12]" not in err
    data = report(path)
    assert data["access_failure"]["kind"] == "unreachable"
    first = data["prompts"][0]
    assert first["not_run"] == "the chat request failed: could not connect (ConnectError)"
    assert first["events"] == 0


def test_a_refusal_after_a_turn_completed_is_a_finding_and_one_at_once_cancels_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = [
        {"id": "good", "message": "hi", "scenario": "demo"},
        {"id": "refused", "message": "hi", "scenario": "status-401"},
        {"id": "after", "message": "hi", "scenario": "account"},
    ]
    status, _, err = run_cli(["qa", "run", str(write_script(tmp_path / "s.json", prompts))], capsys)
    assert status == 1
    assert "stopped" not in err
    assert "[3/3] after: ok" in err
    # One prompt is refused at once; the others stall, and would wait out --timeout.
    prompts = [{"id": f"stall-{n}", "message": "hi", "scenario": "fault-stall"} for n in range(3)]
    prompts.insert(1, {"id": "refused", "message": "hi", "scenario": "status-403"})
    script, path = write_script(tmp_path / "s.json", prompts), tmp_path / "qa.json"
    argv = ["qa", "run", str(script), "--json", str(path), "--concurrency", "4"]
    status, _, err = run_cli([*argv, "--timeout", "600"], capsys)
    assert status == 3
    assert "the server refused the credentials (HTTP 403" in _stop_line(err)
    ran = {prompt["id"]: prompt["ran"] for prompt in report(path)["prompts"]}
    assert ran == {"stall-0": False, "refused": True, "stall-1": False, "stall-2": False}


def test_ctrl_c_writes_the_partial_reports_it_was_asked_for(tmp_path: Path) -> None:
    # Over 127.0.0.1, the prompts after the first stall, so that Ctrl-C lands while they remain.
    prompts = [
        {"id": f"p{n}", "message": "Checking?", "scenario": "fault-stall" if n > 1 else "account"}
        for n in range(1, 6)
    ]
    script = write_script(tmp_path / "s.json", prompts)
    junit, path = tmp_path / "qa.xml", tmp_path / "qa.json"
    with ReferenceServer().serve_loopback() as url:
        env = {**os.environ, "SILVIA_BASE_URL": url, "SILVIA_TOKEN": TOKEN}
        process = subprocess.Popen(
            silvia_command("qa", "run", str(script), "--junit", str(junit), "--json", str(path)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stderr is not None
        lines: list[str] = []
        while not any(line.startswith("[1/5] p1: ok") for line in lines):
            line = process.stderr.readline()
            assert line, f"the run ended first: {lines}"
            lines.append(line)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert "interrupted: " in err
    data = report(path)
    # One count of the prompts not run, said the same way in the stop line and the summary.
    stop = next(line for line in out.splitlines() if line.startswith("interrupted: "))
    assert stop == f"interrupted: {data['not_run']} did not run"
    assert f", {data['not_run']} did not run" in out
    assert data["interrupted"] is True
    assert [prompt["id"] for prompt in data["prompts"]] == ["p1", "p2", "p3", "p4", "p5"]
    ran = [prompt["ran"] for prompt in data["prompts"]]
    assert ran[0] is True
    assert False in ran
    assert ran == sorted(ran, reverse=True)  # one after another: the ones run come first
    assert data["not_run"] == ran.count(False)
    not_run = next(prompt for prompt in data["prompts"] if not prompt["ran"])
    assert not_run["status"] == "not_run"
    assert {rule["status"] for rule in not_run["rules"].values()} == {"not_run"}
    assert all(rule["reason"].startswith("not run: ") for rule in not_run["rules"].values())
    skipped = [
        c.find("skipped")
        for c in cases(junit)
        if c.get("classname") == f"silvia.qa.{not_run['id']}"
    ]
    assert skipped
    assert all(s is not None and s.get("message", "").startswith("not run") for s in skipped)
    assert TOKEN not in out + err + path.read_text() + junit.read_text()


def test_a_session_id_the_url_cannot_carry_is_a_finding_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "s" * 70_000

    def respond(request: Request, connection: Connection) -> None:
        body = event("session", {"sessionId": long_id}) + event("text", {"text": "Hi"})
        body += event("done", {})
        connection.send(head(200, SSE, chunked=True) + chunk(body) + chunk(b""))

    script = write_script(tmp_path / "s.json", [{"id": "long-id", "message": "hi"}])
    junit, path = tmp_path / "junit.xml", tmp_path / "report.json"
    monkeypatch.setenv("SILVIA_TOKEN", "t")
    # The client refuses the GET (tests/client/test_config.py): the reload's finding says so.
    with HostileServer(respond) as server:
        argv = ["qa", "run", str(script), "--base-url", server.url, "--junit", str(junit)]
        status, _, err = run_cli([*argv, "--json", str(path)], capsys)
        assert [r.method for r in server.requests] == ["POST"]  # no GET was sent
    assert status == 1, err  # a finding, never an internal error (4) or a crash
    assert cases(junit)  # well-formed
    (finding,) = report(path)["prompts"][0]["findings"]
    assert finding["rule"] == "reload-agrees"
    assert "ConfigurationError" in finding["message"]


# Progress -----------------------------------------------------------------------------


def test_progress_is_a_live_line_on_a_terminal_a_line_per_prompt_otherwise_or_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = [
        {"id": "good", "message": "Hi", "scenario": "demo"},
        {"id": "bad", "message": "Hi", "scenario": "broken-target-parses"},
    ]
    script = str(write_script(tmp_path / "s.json", prompts))
    terminal = Tty()
    with capsys.disabled(), monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", terminal)
        patch.setattr(sys, "stdout", io.StringIO())
        assert main(["qa", "run", script]) == 1
    assert "\r\x1b[2K[2/2] 3 error(s)" in terminal.getvalue()
    assert "running good" in terminal.getvalue()
    assert "[1/2] good: ok" not in terminal.getvalue()  # not the CI lines
    _, _, err = run_cli(["qa", "run", script], capsys)
    assert "[1/2] good: ok (0 error(s), 0 warning(s))" in err.splitlines()
    assert "\r" not in err
    _, _, err = run_cli(["qa", "run", script, "--quiet"], capsys)
    assert "[1/2]" not in err
    assert "[2/2]" not in err
    now, terminal, seen = [100.0], Tty(), list[str]()
    live = LiveProgress(terminal, 2, clock=lambda: now[0])  # a clock the test moves

    def started(prompt: Any) -> None:
        live.started(prompt)
        now[0] += 2.5  # the turn takes 2.5 s on this clock
        seen.append(live.line())

    run_script(load_script(script), progress=live.finished, started=started)
    assert seen == ["[0/2] 0 error(s); running good, 2.5 s", "[1/2] 0 error(s); running bad, 2.5 s"]
    assert live.line() == "[2/2] 3 error(s)"  # broken-target-parses: three findings
    assert terminal.getvalue().count("\r\x1b[2K") == 4  # redrawn in place: 2 starts, 2 ends
    assert "\n" not in terminal.getvalue()
    live.close()
    assert terminal.getvalue().endswith("\r\x1b[2K")  # cleared before the table
    live.running["p\x1b]0;x\x07"] = 0.0  # a prompt id cannot drive the terminal
    assert "\x1b" not in live.line()


def test_the_table_keeps_to_100_columns_unless_wide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Too wide for a non-terminal's 100 columns: a row per prompt, a column per rule.
    count = 30
    prompts: list[dict[str, object]] = [
        {"id": f"prompt-{n:03}", "message": f"Question {n}: how are my accounts doing?"}
        for n in range(count)
    ]
    prompts[3]["scenario"] = "broken-target-parses"
    script = write_script(tmp_path / "s.json", prompts)
    status, out, _ = run_cli(["qa", "run", str(script)], capsys)
    assert status == 1
    lines = out.splitlines()
    start = lines.index("rules:")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("("))
    shown = lines[start : end + 1]
    assert max(map(len, shown)) <= 100
    rows = [line for line in shown if line[:4].strip().isdigit() and "prompt-" in line]
    assert len(rows) == count
    assert rows[3].split()[2] == "F"  # prompt 4 fails target-parses, the first rule
    assert shown[-1].startswith("(. pass, w warn, F FAIL")
    assert f"  {len(RULES):>2}  {RULES[-1].id}" in shown
    _, out, _ = run_cli(["qa", "run", str(script), "--wide"], capsys)
    header = next(line for line in out.splitlines() if line.startswith("rule "))
    assert header.split()[1:] == [str(n) for n in range(1, count + 1)]  # a column per prompt


# qa check ---------------------------------------------------------------------------


def save(tmp_path: Path, name: str, recording: Recording) -> str:
    path = tmp_path / f"{name}.jsonl"
    recording.save(path)
    return str(path)


def request_id(recording: Recording) -> str:
    return dict(recording.response.headers)["x-request-id"]


def ids(run: RunResult) -> list[str]:
    return [result.prompt.id for result in run.prompts]


def test_each_recording_is_a_prompt_named_by_its_name_request_id_stem_or_place_else_an_error(
    tmp_path: Path,
) -> None:
    good, bad = recorded("demo"), recorded("broken-target-parses")
    g, b = request_id(good), request_id(bad)
    headers = tuple((n, v) for n, v in good.response.headers if n != "x-request-id")
    anonymous = replace(good, response=replace(good.response, headers=headers))
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
    # What is not a recording raises, saying what check_recordings takes.
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(RecordingFormatError) as caught:
        check_recordings([good, broken])
    assert caught.value.path == str(broken)
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
        check_recordings([good, tmp_path / "never-read.jsonl", 3])  # type: ignore[list-item]


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
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Recorded turns are judged offline: no token goes anywhere, so no transport warning.
    monkeypatch.setenv("SILVIA_TOKEN", "a-real-token")
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    path = save(tmp_path, "vendor", recorded("broken-no-vendor-names"))
    status, out, err = run_cli(["qa", "check", path], capsys)
    assert (status, err) == (0, "")
    assert table(out)["no-vendor-names"] == ["warn"]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    # A live observer's client warns as any client does (tests/client/test_privacy.py).
    with Observer.connect("http://staging.example.com", token="qa-token"):
        assert len([r for r in caplog.records if "plain http" in r.getMessage()]) == 1
    path = save(tmp_path, "refused", recorded("status-401"))
    status, out, _ = run_cli(["qa", "check", path], capsys)
    assert status == 1  # a recorded refusal is a finding: no server is refusing anything now
    assert table(out)["stream-complete"] == ["FAIL"]
    assert "HTTP 401" in out
    # A bad file, named with its line: tests/testing/test_recording_format.py.
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n", encoding="utf-8")
    said = f"silvia qa: {bad}: line 1: not a JSON line (is the file truncated or corrupted?)\n"
    assert run_cli(["qa", "check", str(bad)], capsys) == (2, "", said)
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
    assert cases(junit)  # a case per prompt and rule: test_reports.py


# Concurrency: the same run whatever N ---------------------------------------------------

PROMPTS: list[dict[str, Any]] = [
    {"id": "demo", "message": "Overview?", "scenario": "demo"},
    {"id": "more", "message": "And Apple?", "scenario": "market-data", "continue": True},
    {"id": "again", "message": "And the web?", "scenario": "search-web", "continue": True},
    {"id": "drop", "message": "Cards?", "scenario": "fault-drop"},
    {"id": "after-drop", "message": "Still there?", "scenario": "account", "continue": True},
    {"id": "failed", "message": "Cards?", "scenario": "status-500"},
    {"id": "after-failed", "message": "Still there?", "scenario": "account", "continue": True},
    *({"id": n, "message": "Accounts?", "scenario": n} for n in sorted(BROKEN_SCENARIOS)),
    {
        "id": "expect",
        "message": "Hi",
        "scenario": "no-citations",
        "expect": {"cites_account": True},
    },
]
SCRIPT = parse_script({"name": "concurrency", "prompts": PROMPTS})


def verdicts(run: RunResult) -> list[tuple[object, ...]]:
    """Everything a report shows of a run, but ids and timings."""
    return [
        (
            result.prompt.id,
            result.ran,
            result.observation.complete,
            tuple((outcome.rule.id, outcome.status) for outcome in result.result.outcomes),
            tuple((f.rule, f.severity, f.message) for f in result.result.findings),
        )
        for result in run.prompts
    ]


def run_async(
    concurrency: int, script: Any = SCRIPT, observer: Any = AsyncObserver, **kw: Any
) -> RunResult:
    async def run() -> RunResult:
        async with observer.reference(**kw) as qa:
            return await arun_script(script, observer=qa, concurrency=concurrency)

    return asyncio.run(run())


def test_the_run_is_the_same_whatever_n_and_continues_each_session() -> None:
    sequential = run_script(SCRIPT, timeout=0.5)
    assert sequential.exit_status == 1
    for concurrency in (1, 3, 16):
        concurrent = run_async(concurrency, timeout=0.5)
        assert verdicts(concurrent) == verdicts(sequential), concurrency
        assert concurrent.exit_status == sequential.exit_status
        assert (concurrent.errors, concurrent.warnings) == (sequential.errors, sequential.warnings)
    by_id = {result.prompt.id: result.observation for result in concurrent.prompts}
    assert by_id["more"].session_id == by_id["demo"].session_id
    assert by_id["again"].session_id == by_id["demo"].session_id
    assert by_id["after-drop"].session_id == by_id["drop"].session_id  # named before the drop
    # A prompt continuing a turn that failed before its session was named is not sent.
    assert by_id["after-failed"].failure == "the previous prompt gave no session to continue"
    sessions = {o.session_id for o in by_id.values() if o.session_id}
    assert len(sessions) == len(PROMPTS) - 5  # one per prompt: not the 4 continuing, nor 500


class Counting(AsyncObserver):
    """An observer that counts the prompts it has in flight."""

    in_flight = 0
    most = 0

    async def observe(self, message: str, **options: Any) -> Observation:
        Counting.in_flight += 1
        Counting.most = max(Counting.most, Counting.in_flight)
        try:
            return await super().observe(message, **options)
        finally:
            Counting.in_flight -= 1


def test_no_more_than_n_prompts_run_at_once_n_is_positive_and_scenarios_are_known() -> None:
    script = parse_script({"prompts": [{"message": "hi", "scenario": "account"}] * 12})
    for concurrency in (1, 4):
        Counting.most = 0
        server = ReferenceServer(pace=0.01)  # turns that take a while, so that they overlap
        assert run_async(concurrency, script, Counting, server=server).exit_status == 0
        assert Counting.most == concurrency
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(arun_script(SCRIPT, concurrency=0))
    server = ReferenceServer()
    script = parse_script({"prompts": [{"message": "hi", "scenario": "nope"}]})
    with pytest.raises(ScriptFormatError, match="nope"):
        run_async(4, script, server=server)
    assert len(server.sessions) == 0
