"""A QA run that stops short: Ctrl-C, or a server that cannot be used (exit status 3).

Either way the reports asked for are written, the prompts not run marked.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command
from ._cli import run_cli, write_script

TOKEN = "stops-s3cret-token"


def test_ctrl_c_writes_the_partial_reports_it_was_asked_for(tmp_path: Path) -> None:
    prompts: list[dict[str, object]] = [
        {"id": f"p{n}", "message": "How much is in checking?", "scenario": "account"}
        for n in range(1, 6)
    ]
    script = write_script(tmp_path / "s.json", prompts)
    junit, report = tmp_path / "qa.xml", tmp_path / "qa.json"
    # Slow turns over 127.0.0.1, so that Ctrl-C lands while prompts remain.
    with ReferenceServer(pace=0.1).serve_loopback() as url:
        env = {**os.environ, "SILVIA_BASE_URL": url, "SILVIA_TOKEN": TOKEN}
        command = silvia_command("qa", "run", str(script))
        process = subprocess.Popen(
            [*command, "--junit", str(junit), "--json", str(report)],
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
    data = json.loads(report.read_text(encoding="utf-8"))
    # One count of the prompts not run, said the same way in the stop line and the summary.
    stop = next(line for line in out.splitlines() if line.startswith("interrupted: "))
    assert stop == f"interrupted: {data['not_run']} did not run"
    assert f", {data['not_run']} did not run" in out
    assert data["interrupted"] is True
    ran = [prompt["ran"] for prompt in data["prompts"]]
    assert [prompt["id"] for prompt in data["prompts"]] == ["p1", "p2", "p3", "p4", "p5"]
    assert ran[0] is True
    assert False in ran
    assert ran == sorted(ran, reverse=True)  # one after another: the ones run come first
    assert data["not_run"] == ran.count(False)
    not_run = next(prompt for prompt in data["prompts"] if not prompt["ran"])
    assert {rule["status"] for rule in not_run["rules"].values()} == {"not_run"}
    assert not_run["status"] == "not_run"
    assert all(rule["reason"].startswith("not run: ") for rule in not_run["rules"].values())

    root = ET.parse(junit).getroot()
    skipped = [
        case.find("skipped")
        for case in root.iter("testcase")
        if case.get("classname") == f"silvia.qa.{not_run['id']}"
    ]
    assert skipped
    assert all(s is not None and s.get("message", "").startswith("not run") for s in skipped)
    assert TOKEN not in out + err + report.read_text() + junit.read_text()


# Fail fast: a server that refuses the credentials, or is not there ---------------------


def _stop_line(err: str) -> str:
    (line,) = [line for line in err.splitlines() if line.startswith("silvia qa: stopped: ")]
    return line


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    return monkeypatch


EXAMPLE = Path(__file__).parents[2] / "examples" / "qa_script.json"


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_server_refusing_the_token_stops_the_run_with_status_3(
    concurrency: str,
    clean_env: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A loopback server that answers 401 to our token, found through SILVIA_BASE_URL.
    server = ReferenceServer(token="the-right-" + TOKEN)
    report = tmp_path / "qa.json"
    with server.serve_loopback() as url:
        clean_env.setenv("SILVIA_BASE_URL", url)
        clean_env.setenv("SILVIA_TOKEN", TOKEN)
        argv = ["qa", "run", str(EXAMPLE), "--json", str(report), "--concurrency", concurrency]
        status, out, err = run_cli(argv, capsys)
    assert status == 3
    data = json.loads(report.read_text(encoding="utf-8"))
    failure = data["access_failure"]
    assert failure["kind"] == "refused"
    request_id = failure["request_id"]
    assert request_id
    line = _stop_line(err)
    assert line.startswith(
        "silvia qa: stopped: the server refused the credentials (HTTP 401 authentication_error, "
        f"request id {request_id}); check SILVIA_TOKEN; "
    )
    ran = [prompt for prompt in data["prompts"] if prompt["ran"]]
    assert 1 <= len(ran) <= int(concurrency)  # no prompt started once the refusal came
    refused = next(prompt for prompt in ran if prompt["request_id"] == request_id)
    assert {finding["request_id"] for finding in refused["findings"]} == {request_id}
    assert data["not_run"] == len(data["prompts"])  # the refused one too: it gave no turn
    assert data["failed"] == 0
    assert [finding["rule"] for finding in refused["findings"]] == ["stream-complete"]
    assert refused["status"] == "not_run"
    assert data["exit_status"] == 3
    assert out.rstrip().splitlines()[-1].startswith("STOPPED: ")
    assert TOKEN not in out + err + report.read_text(encoding="utf-8")


def test_prompts_in_flight_are_cancelled_when_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One prompt is refused at once; the others stall, and would wait out --timeout.
    prompts: list[dict[str, object]] = [
        {"id": f"stall-{n}", "message": "hi", "scenario": "fault-stall"} for n in range(3)
    ]
    prompts.insert(1, {"id": "refused", "message": "hi", "scenario": "status-403"})
    script = write_script(tmp_path / "s.json", prompts)
    report = tmp_path / "qa.json"
    argv = ["qa", "run", str(script), "--json", str(report), "--concurrency", "4"]
    status, _, err = run_cli([*argv, "--timeout", "600"], capsys)
    assert status == 3
    assert "the server refused the credentials (HTTP 403" in _stop_line(err)
    data = json.loads(report.read_text(encoding="utf-8"))
    assert {prompt["id"]: prompt["ran"] for prompt in data["prompts"]} == {
        "stall-0": False,
        "refused": True,
        "stall-1": False,
        "stall-2": False,
    }


def test_a_server_that_is_not_there_stops_the_run_with_status_3(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    clean_env.setenv("SILVIA_TOKEN", TOKEN)
    status, _, err = run_cli(["qa", "run", str(EXAMPLE), "--base-url", url], capsys)
    assert status == 3
    assert _stop_line(err).startswith(
        "silvia qa: stopped: cannot reach the server (ConnectError, no request id); 12 did not run"
    )
    assert "[2/12]" not in err


def test_a_refusal_after_a_turn_completed_is_a_finding_not_a_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write_script(
        tmp_path / "s.json",
        [
            {"id": "good", "message": "hi", "scenario": "demo"},
            {"id": "refused", "message": "hi", "scenario": "status-401"},
            {"id": "after", "message": "hi", "scenario": "account"},
        ],
    )
    status, _, err = run_cli(["qa", "run", str(script)], capsys)
    assert status == 1
    assert "stopped" not in err
    assert "[3/3] after: ok" in err
