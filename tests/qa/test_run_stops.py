"""A QA run that stops short: Ctrl-C still writes the reports, the prompts not run marked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from silvia_client.testing import ReferenceServer

from ._cli import write_script

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
        command = [sys.executable, "-m", "silvia_client", "qa", "run", str(script)]
        process = subprocess.Popen(
            [*command, "--junit", str(junit), "--json", str(report)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stderr is not None
        lines = []
        while not any(line.startswith("[1/5] p1: ok") for line in lines):
            line = process.stderr.readline()
            assert line, f"the run ended first: {lines}"
            lines.append(line)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert "interrupted: " in err
    assert "prompt(s) not run" in out

    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["interrupted"] is True
    ran = [prompt["ran"] for prompt in data["prompts"]]
    assert [prompt["id"] for prompt in data["prompts"]] == ["p1", "p2", "p3", "p4", "p5"]
    assert ran[0] is True
    assert False in ran
    assert ran == sorted(ran, reverse=True)  # one after another: the ones run come first
    assert data["not_run"] == ran.count(False)
    not_run = next(prompt for prompt in data["prompts"] if not prompt["ran"])
    assert {rule["status"] for rule in not_run["rules"].values()} == {"skip"}
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
