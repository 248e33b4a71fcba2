"""`silvia qa`: exit codes, progress, the table, and the JUnit and JSON reports."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.qa import RULES, AsyncObserver, Observer
from silvia_client.testing import (
    BROKEN_RULES,
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    ReferenceServer,
    record_turn,
)

from ..cli._lone_surrogates import ESCAPED as LONE_ESCAPED
from ..cli._lone_surrogates import server as lone_surrogates_server
from ._cli import broken_script, run_cli, table, write_script

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "qa_script.json")
RULE_IDS = [rule.id for rule in RULES]


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)


def test_rules_lists_every_rule_with_its_severity(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["qa", "rules"], capsys)
    assert status == 0
    listed = [line.split(maxsplit=2) for line in out.splitlines()]
    assert [row[0] for row in listed] == [*RULE_IDS, "expectations", "timing"]
    assert [row[1] for row in listed] == [rule.severity for rule in RULES] + ["error", "warning"]


def test_the_example_passes_on_the_reference_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run_cli(["qa", "run", EXAMPLE], capsys)
    assert status == 0
    cells = table(out)
    assert list(cells) == [*RULE_IDS, "expectations"]
    assert {cell for row in cells.values() for cell in row} == {"pass"}
    assert len(cells["target-parses"]) == 12
    chosen, *progress = err.splitlines()
    assert chosen == (
        "silvia qa run: no --base-url and no SILVIA_BASE_URL: using the embedded reference "
        "server (in this process, made-up data)"
    )
    assert len(progress) == 12
    assert progress[0] == "[1/12] overview: ok (0 error(s), 0 warning(s))"
    assert out.rstrip().endswith("ok: 0 error(s), 0 warning(s) over 12 prompt(s) and 12 rule(s)")


def test_each_broken_scenario_fails_its_own_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = broken_script(tmp_path / "broken.json")
    status, out, err = run_cli(["qa", "run", str(script)], capsys)
    assert status == 1
    cells = table(out)
    prompts = ["demo", *BROKEN_RULES]
    for rule, row in cells.items():
        for prompt, cell in zip(prompts, row, strict=True):
            broken = BROKEN_RULES.get(prompt) == rule
            expected = "pass"
            if broken:
                expected = "warn" if rule == "no-vendor-names" else "FAIL"
            elif prompt == "broken-stream-complete" and rule == "reload-agrees":
                expected = "-"  # an incomplete turn is not reloaded
            assert cell == expected, (rule, prompt)
    assert "[2/12] broken-target-parses: FAIL" in err
    assert "broken-no-vendor-names: warn (0 error(s), 3 warning(s))" in err
    assert "FAIL  target-fits-source  [broken-target-fits-source]" in out
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 19 error(s), 3 warning(s)")


def test_warnings_alone_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(
        tmp_path / "s.json",
        [{"message": "What is my brokerage worth?", "scenario": "broken-no-vendor-names"}],
    )
    status, out, _ = run_cli(["qa", "run", str(script)], capsys)
    assert status == 0
    assert table(out)["no-vendor-names"] == ["warn"]


def test_reports_and_the_exit_status_go_by_each_findings_own_severity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An error rule whose finding is a warning (a turn resumed from an old checkpoint),
    # and the same turn where the prompt rules that out, so the finding is an error.
    resumed: dict[str, object] = {
        "message": "And checking now?",
        "scenario": "checkpoint-fresh-write",
    }
    for strict, status, cell in ((False, 0, "warn"), (True, 1, "FAIL")):
        prompt = {**resumed, "expect": {"no_old_checkpoint": True}} if strict else resumed
        script = write_script(tmp_path / "s.json", [prompt])
        junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
        args = ["qa", "run", str(script), "--junit", str(junit), "--json", str(report)]
        code, out, err = run_cli(args, capsys)
        assert code == status
        assert table(out)["one-meaning-per-source"] == [cell]
        level = "FAIL" if strict else "warn"
        assert f"{level}  one-meaning-per-source  [p1]" in out
        counts = "1 error(s), 0 warning(s)" if strict else "0 error(s), 1 warning(s)"
        assert f"p1: {'FAIL' if strict else 'warn'} ({counts})" in err
        (case,) = [
            c
            for c in ET.parse(junit).getroot().iter("testcase")
            if c.get("name") == "one-meaning-per-source"
        ]
        assert (case.find("failure") is not None) is strict
        assert (case.find("system-out") is not None) is not strict
        data = json.loads(report.read_text(encoding="utf-8"))
        assert (data["ok"], data["errors"], data["warnings"]) == (
            not strict,
            int(strict),
            int(not strict),
        )
        (finding,) = data["prompts"][0]["findings"]
        assert finding["severity"] == ("error" if strict else "warning")
        assert data["prompts"][0]["rules"]["one-meaning-per-source"] == {
            "status": "fail" if strict else "warn"
        }


def test_an_unmet_expectation_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write_script(
        tmp_path / "s.json",
        [{"message": "Hello", "scenario": "no-citations", "expect": {"cites_account": True}}],
    )
    status, out, _ = run_cli(["qa", "run", str(script)], capsys)
    assert status == 1
    assert table(out)["expectations"] == ["FAIL"]
    assert "FAIL  expectations  [p1]  expected a citation of an account" in out


def test_junit_has_a_case_per_prompt_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = broken_script(tmp_path / "broken.json")
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    report = tmp_path / "out" / "report.json"
    args = ["qa", "run", str(script), "--junit", str(junit), "--json", str(report)]
    status, _, _ = run_cli(args, capsys)
    assert status == 1
    root = ET.parse(junit).getroot()
    (suite,) = root.iter("testsuite")
    cases = list(suite.iter("testcase"))
    assert len(cases) == 12 * len(RULES) == int(suite.get("tests", ""))

    # Each case's time is its prompt's measured turn time (to done, else the last moment
    # the turn reached), the suite's their sum.
    def turn_time(timings: dict[str, float | None] | None) -> float:
        moments = (timings or {}).get
        return moments("done") or moments("first_text") or moments("first_byte") or 0.0

    done = {
        prompt["id"]: turn_time(prompt["timings"])
        for prompt in json.loads(report.read_text(encoding="utf-8"))["prompts"]
    }
    for case in cases:
        prompt_id = (case.get("classname") or "").removeprefix("silvia.qa.")
        assert float(case.get("time", "")) == pytest.approx(done[prompt_id], abs=0.001)
    assert any(seconds > 0 for seconds in done.values())
    assert float(suite.get("time", "")) == pytest.approx(sum(done.values()), abs=0.02)
    failed = {(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None}
    assert failed == {
        (f"silvia.qa.{name}", rule)
        for name, rule in BROKEN_RULES.items()
        if rule != "no-vendor-names"
    }
    assert int(suite.get("failures", "")) == len(failed)
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert [(c.get("classname"), c.get("name")) for c in skipped] == [
        ("silvia.qa.broken-stream-complete", "reload-agrees")
    ]
    vendor = next(
        c
        for c in cases
        if c.get("classname") == "silvia.qa.broken-no-vendor-names"
        and c.get("name") == "no-vendor-names"
    )
    assert vendor.find("failure") is None
    assert "warn  no-vendor-names" in (vendor.findtext("system-out") or "")
    failure = next(
        c for c in cases if c.get("name") == "target-parses" and c.find("failure") is not None
    )
    assert failure.find("failure").get("type") == "target-parses"  # type: ignore[union-attr]


def test_the_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = broken_script(tmp_path / "broken.json")
    path = tmp_path / "report.json"
    status, _, _ = run_cli(["qa", "run", str(script), "--json", str(path)], capsys)
    assert status == 1
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert (report["errors"], report["warnings"]) == (19, 3)
    assert [rule["id"] for rule in report["rules"]] == RULE_IDS
    prompts = {prompt["id"]: prompt for prompt in report["prompts"]}
    assert prompts["demo"]["ok"] is True
    assert prompts["demo"]["findings"] == []
    assert prompts["demo"]["session_id"]
    assert prompts["demo"]["complete"] is True
    for name, rule in BROKEN_RULES.items():
        found = {finding["rule"] for finding in prompts[name]["findings"]}
        assert found == {rule}
        status_of = prompts[name]["rules"][rule]["status"]
        assert status_of == ("warn" if rule == "no-vendor-names" else "fail")
    assert prompts["broken-stream-complete"]["rules"]["reload-agrees"] == {
        "status": "skip",
        "reason": "the turn did not complete, so it was not reloaded",
    }


def test_a_run_against_a_base_url(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "qa-token-for-the-loopback")
    server = ReferenceServer(token="qa-token-for-the-loopback")
    with server.serve_loopback() as url:
        status, out, _ = run_cli(["qa", "run", EXAMPLE, "--base-url", url], capsys)
    assert status == 0
    assert out.startswith(f"silvia qa: 12 prompt(s) against {url}")
    assert len(server.sessions) == 11  # one prompt continues the session before it


def test_a_base_url_that_refuses_the_token_stops_at_the_first_prompt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "wrong")
    with ReferenceServer(token="right").serve_loopback() as url:
        status, out, err = run_cli(["qa", "run", EXAMPLE, "--base-url", url], capsys)
    assert status == 3
    cells = table(out)
    assert cells["stream-complete"] == ["FAIL", *["n/r"] * 11]  # one cause, one finding
    assert {row[0] for rule, row in cells.items() if rule != "stream-complete"} == {"n/r"}
    assert "the chat request failed: HTTP 401 (authentication_error): " in out
    assert "prompts: 0 passed, 0 failed, 12 did not run" in out
    assert "silvia qa: stopped: the server refused the credentials (HTTP 401" in err


USAGE_ERRORS: list[tuple[list[str], dict[str, str], str]] = [
    (["missing.json"], {}, "cannot read"),
    ([EXAMPLE, "--base-url", "http://127.0.0.1:9"], {}, "set SILVIA_TOKEN"),
    ([EXAMPLE], {"SILVIA_BASE_URL": "http://127.0.0.1:9"}, "set SILVIA_TOKEN"),
    ([EXAMPLE], {"SILVIA_BASE_URL": "127.0.0.1:9", "SILVIA_TOKEN": "t"}, "absolute http(s)"),
    ([EXAMPLE, "--base-url", "ftp://x"], {"SILVIA_TOKEN": "t"}, "absolute http(s) URL"),
]


def test_usage_errors_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for args, env, message in USAGE_ERRORS:
        with monkeypatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            status, out, err = run_cli(["qa", "run", *args], capsys)
        assert (status, out) == (2, ""), (args, env)
        assert message in err, (args, env)


def test_a_script_out_of_format_or_naming_no_scenario_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"prompts": [{"mesage": "hi"}]}', encoding="utf-8")
    status, _, err = run_cli(["qa", "run", str(bad)], capsys)
    assert (status, err) == (
        2,
        f"silvia qa: {bad}: line 1 column 14: prompts[0]: unknown key(s) 'mesage'; allowed: "
        "continue, expect, id, message, scenario\n",
    )
    unknown = write_script(tmp_path / "s.json", [{"message": "hi", "scenario": "nope"}])
    status, out, err = run_cli(["qa", "run", str(unknown)], capsys)
    assert status == 2
    assert "p1: 'nope'" in err
    assert out == ""


def test_missing_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["qa"],
        ["qa", "run"],
        ["qa", "run", EXAMPLE, "--timeout", "soon"],
        ["qa", "run", EXAMPLE, "--timeout", "0"],
        ["qa", "run", EXAMPLE, "--timeout", "nan"],
    ):
        with pytest.raises(SystemExit) as caught:
            run_cli(args, capsys)
        assert caught.value.code == 2


def test_a_report_that_cannot_be_written_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run_cli(["qa", "run", EXAMPLE, "--json", str(tmp_path)], capsys)
    assert status == 2
    assert "cannot write a report" in err
    assert "ok: 0 error(s)" in out  # the run itself was reported


def test_failures_name_their_request_and_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write_script(
        tmp_path / "s.json",
        [{"id": "bad", "message": "How is Apple?", "scenario": "broken-target-fits-source"}],
    )
    path = tmp_path / "report.json"
    status, out, err = run_cli(["qa", "run", str(script), "--json", str(path)], capsys)
    assert status == 1
    (prompt,) = json.loads(path.read_text(encoding="utf-8"))["prompts"]
    request_id, session_id = prompt["request_id"], prompt["session_id"]
    assert request_id
    assert session_id
    assert prompt["findings"]
    for finding in prompt["findings"]:
        assert (finding["request_id"], finding["session_id"]) == (request_id, session_id)
    ids = f"request {request_id}, session {session_id}"
    line = next(line for line in out.splitlines() if line.startswith("FAIL  target-fits-source"))
    assert line.endswith(f"  ({ids})")
    (progress,) = [line for line in err.splitlines() if line.startswith("[1/1] bad: FAIL (")]
    assert progress.endswith(f"; {ids}")


# ----------------------------------------------------------- transport warnings


def _plain_http_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "plain http" in r.getMessage()]


def test_qa_check_never_warns_about_transport_security(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Recorded turns are judged offline: no token goes anywhere, so there is nothing
    # to warn of, with or without a token in the environment.
    recording = record_turn(
        "How are my accounts?",
        transport=ReferenceServer().transport(),
        base_url=IN_PROCESS_URL,
        token="t",
        default_headers={SCENARIO_HEADER: "accounts"},
    )
    path = tmp_path / "turn.jsonl"
    recording.save(path)
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    for token in (None, "a-real-token"):
        if token is not None:
            monkeypatch.setenv("SILVIA_TOKEN", token)
        status, out, err = run_cli(["qa", "check", str(path)], capsys)
        assert status == 0
        assert "ok: 0 error(s)" in out
        assert err == ""
        assert _plain_http_warnings(caplog) == []
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize("kind", [Observer, AsyncObserver])
def test_a_live_observer_over_plain_http_with_a_token_still_warns(
    kind: type[Observer] | type[AsyncObserver], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="silvia_client")
    observer = kind.connect("http://staging.example.com", token="qa-token")
    assert _plain_http_warnings(caplog) == [
        f"{type(observer.client).__name__}: the token goes over plain http to "
        "staging.example.com; use https unless a trusted proxy sits in between"
    ]
    if isinstance(observer, Observer):
        observer.close()
    else:
        asyncio.run(observer.aclose())


# ----------------------------------------------------- lone surrogates from the server

SURROGATE_TOKEN = "qa-lone-surrogate-token"


@pytest.fixture(scope="module")
def lone_surrogates_url() -> Iterator[str]:
    with lone_surrogates_server(SURROGATE_TOKEN).serve_loopback() as url:
        yield url


def _run_lone_surrogates(
    scenario: str,
    url: str,
    extra: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    monkeypatch.setenv("SILVIA_TOKEN", SURROGATE_TOKEN)
    script = write_script(tmp_path / "s.json", [{"message": "Rates?", "scenario": scenario}])
    return run_cli(["qa", "run", str(script), "--base-url", url, *extra], capsys)


def test_a_lone_surrogate_in_a_finding_is_written_escaped(
    lone_surrogates_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run_lone_surrogates(
        "lone-surrogates-misfit", lone_surrogates_url, [], tmp_path, monkeypatch, capsys
    )
    assert status == 1  # the finding's status, not a crash's
    (finding,) = [line for line in out.splitlines() if line.startswith("FAIL  ")]
    assert finding.startswith("FAIL  target-fits-source  [p1]  https://example.com/rates: ")
    assert f"`market_data` (X{LONE_ESCAPED})" in finding
    assert table(out)["target-fits-source"] == ["FAIL"]
    assert "[1/1] p1: FAIL (1 error(s), 0 warning(s))" in err
    assert "internal error" not in err


def _read_report(kind: str, path: Path) -> None:
    raw = path.read_bytes().decode("utf-8")  # strict: no lone surrogate was written raw
    references = [int(number) for number in re.findall(r"&#(\d+);", raw)]
    assert not [n for n in references if 0xD800 <= n <= 0xDFFF]  # nor as XML 1.0 refuses it
    if kind == "junit":
        assert len(list(ET.parse(path).getroot().iter("testcase"))) == len(RULES)
    elif kind == "json":
        assert len(json.loads(path.read_text(encoding="utf-8"))["prompts"]) == 1
    else:
        assert "<html" in path.read_text(encoding="utf-8").lower()


@pytest.mark.parametrize(
    ("scenario", "kind", "status"),
    [
        ("lone-surrogates", "junit", 0),
        ("lone-surrogates", "json", 0),
        ("lone-surrogates", "html", 0),
        ("lone-surrogates-misfit", "junit", 1),
        ("lone-surrogates-misfit", "json", 1),
        ("lone-surrogates-misfit", "html", 1),
    ],
)
def test_a_turn_with_lone_surrogates_keeps_its_status_and_its_reports(
    scenario: str,
    kind: str,
    status: int,
    lone_surrogates_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / f"report.{kind}"
    code, out, err = _run_lone_surrogates(
        scenario, lone_surrogates_url, [f"--{kind}", str(path)], tmp_path, monkeypatch, capsys
    )
    assert "internal error" not in err
    assert code == status
    assert "1 prompt(s)" in out
    _read_report(kind, path)
