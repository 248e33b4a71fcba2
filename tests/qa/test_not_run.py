"""Findings keep the cause (issue 22): the server's words, once, and "not run" for the rest.

A prompt whose request fails before any event (a misspelled scenario: HTTP 400
from a loopback reference server) has one finding, carrying the server's error
type and message, in the table, the JSON, the HTML and the JUnit report; its
other rules, expectations and timing included, are "not run" (never "pass"):
`n/r` in the table, `not_run` in JSON, `<skipped>` in JUnit beside one
`<error>` for the cause, a mark of its own in HTML. The summary counts it
apart from the prompts that failed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

from ._cli import run_cli, table, write_script

TOKEN = "qa-not-run-token"
SAID = "Unknown scenario 'acounts'; `silvia serve --list` lists them."


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)


def test_a_misspelled_scenario_is_one_finding_with_the_servers_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write_script(
        tmp_path / "s.json",
        [
            {"id": "good", "message": "Hi", "scenario": "demo"},
            {
                "id": "typo",
                "message": "How are my accounts?",
                "scenario": "acounts",
                "expect": {"cites_account": True, "max_turn_s": 30},
            },
            {"id": "bad", "message": "Hi", "scenario": "broken-target-parses"},
        ],
    )
    junit, report, page = tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        status, out, err = run_cli(
            [
                *("qa", "run", str(script), "--base-url", url),
                *("--junit", str(junit), "--json", str(report), "--html", str(page)),
            ],
            capsys,
        )
    assert status == 1
    cells = table(out)
    assert cells["stream-complete"][1] == "FAIL"
    assert cells["expectations"][1] == "n/r"
    assert cells["timing"][1] == "n/r"  # never "pass" for a turn that never ran
    assert {row[1] for rule, row in cells.items() if rule != "stream-complete"} == {"n/r"}
    findings = [line for line in out.splitlines() if "[typo]" in line]
    assert len(findings) == 1
    assert f"HTTP 400 (invalid_request_error): {SAID}" in findings[0]
    assert "prompts: 1 passed, 1 failed, 1 did not run" in out
    (progress,) = [line for line in err.splitlines() if line.startswith("[2/3] typo: ")]
    assert progress.startswith(
        f"[2/3] typo: not run: the chat request failed: HTTP 400 (invalid_request_error): {SAID}"
        " (request "
    )
    assert ".;" not in err

    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["failed"], data["not_run"]) == (1, 1)
    typo = data["prompts"][1]
    assert typo["status"] == "not_run"
    assert SAID in typo["not_run"]
    assert [finding["message"] for finding in typo["findings"]] == [typo["not_run"]]
    statuses = {rule: value["status"] for rule, value in typo["rules"].items()}
    assert statuses.pop("stream-complete") == "fail"
    assert set(statuses.values()) == {"not_run"}
    assert data["prompts"][2]["status"] == "fail"

    cases = [
        case
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.get("classname") == "silvia.qa.typo"
    ]
    errors = [case.find("error") for case in cases if case.find("error") is not None]
    assert len(errors) == 1
    assert SAID in (errors[0].get("message") or "")  # type: ignore[union-attr]
    assert all(case.find("failure") is None for case in cases)
    assert sum(case.find("skipped") is not None for case in cases) == len(cases) - 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("errors") == "1"

    html = page.read_text(encoding="utf-8")
    assert 'class="prompt not-run" id="prompt-2"' in html
    assert "Unknown scenario &#x27;acounts&#x27;" in html


def test_a_refused_token_is_one_finding_not_three(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "a-wrong-token")
    script = write_script(
        tmp_path / "s.json",
        [{"id": "p1", "message": "Hi", "expect": {"complete": True, "max_turn_s": 30}}],
    )
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        status, out, _ = run_cli(["qa", "run", str(script), "--base-url", url], capsys)
    assert status == 3
    assert len([line for line in out.splitlines() if line.startswith("FAIL  ")]) == 1
    assert table(out)["timing"] == ["n/r"]
    assert "1 error(s)" in out.splitlines()[-1]
