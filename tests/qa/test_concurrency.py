"""`arun_script` and `silvia qa run --concurrency N`: the same run whatever N.

Prompts run up to N at once; a prompt marked `continue` waits for the one it
continues and gets its session. The result (order, every rule's outcome, the
findings, the exit status) is the one the sequential run gives.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from silvia_client.qa import (
    AsyncObserver,
    Observation,
    RunResult,
    ScriptFormatError,
    arun_script,
    parse_script,
    run_script,
)
from silvia_client.testing import BROKEN_SCENARIOS, ReferenceServer

from ._cli import run_cli, write_script

PROMPTS: list[dict[str, Any]] = [
    {"id": "demo", "message": "Overview?", "scenario": "demo"},
    {"id": "more", "message": "And Apple?", "scenario": "market-data", "continue": True},
    {"id": "again", "message": "And the web?", "scenario": "search-web", "continue": True},
    {"id": "drop", "message": "Cards?", "scenario": "fault-drop"},
    {"id": "after-drop", "message": "Still there?", "scenario": "account", "continue": True},
    {"id": "failed", "message": "Cards?", "scenario": "status-500"},
    {"id": "after-failed", "message": "Still there?", "scenario": "account", "continue": True},
    *(
        {"id": name, "message": "How are my accounts?", "scenario": name}
        for name in sorted(BROKEN_SCENARIOS)
    ),
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


def run_async(concurrency: int, server: ReferenceServer | None = None) -> RunResult:
    async def run() -> RunResult:
        async with AsyncObserver.reference(server=server, timeout=0.5) as observer:
            return await arun_script(SCRIPT, observer=observer, concurrency=concurrency)

    return asyncio.run(run())


def test_the_run_is_the_same_whatever_n() -> None:
    sequential = run_script(SCRIPT, timeout=0.5)
    assert sequential.exit_status == 1
    for concurrency in (1, 3, 16):
        concurrent = run_async(concurrency)
        assert verdicts(concurrent) == verdicts(sequential), concurrency
        assert concurrent.exit_status == sequential.exit_status
        assert (concurrent.errors, concurrent.warnings) == (sequential.errors, sequential.warnings)


def test_a_continued_prompt_gets_the_session_of_the_one_it_continues() -> None:
    run = run_async(16)
    by_id = {result.prompt.id: result.observation for result in run.prompts}
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


@pytest.mark.parametrize("concurrency", [1, 4])
def test_no_more_than_n_prompts_run_at_once(concurrency: int) -> None:
    Counting.most = 0
    server = ReferenceServer(pace=0.01)  # turns that take a while, so that they overlap
    script = parse_script(
        {"prompts": [{"message": "hi", "scenario": "account"} for _ in range(12)]}
    )

    async def run() -> RunResult:
        observer = Counting.reference(server=server)
        async with observer:
            return await arun_script(script, observer=observer, concurrency=concurrency)

    assert asyncio.run(run()).exit_status == 0
    assert Counting.most == concurrency


def test_a_scenario_the_server_lacks_is_refused_before_anything_is_sent() -> None:
    script = parse_script({"prompts": [{"message": "hi", "scenario": "nope"}]})
    server = ReferenceServer()

    async def run() -> RunResult:
        async with AsyncObserver.reference(server=server) as observer:
            return await arun_script(script, observer=observer, concurrency=4)

    with pytest.raises(ScriptFormatError, match="nope"):
        asyncio.run(run())
    assert len(server.sessions) == 0


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(arun_script(SCRIPT, concurrency=0))


def _report(path: Path) -> list[dict[str, object]]:
    """A JSON report's prompts, without what differs from run to run (ids and timings)."""
    prompts = json.loads(path.read_text(encoding="utf-8"))["prompts"]
    for prompt in prompts:
        for key in ("session_id", "request_id", "timings"):
            prompt.pop(key)
        for finding in prompt["findings"]:
            finding.pop("request_id")
            finding.pop("session_id")
            finding["evidence"].pop("request_id", None)
    return list(prompts)


def test_the_command_reports_the_same_for_any_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write_script(tmp_path / "s.json", PROMPTS)
    reports = {}
    for concurrency in ("1", "8"):
        path = tmp_path / f"report-{concurrency}.json"
        argv = [
            "qa",
            "run",
            str(script),
            "--json",
            str(path),
            "--concurrency",
            concurrency,
            "--wide",
        ]
        status, out, _ = run_cli([*argv, "--timeout", "0.5"], capsys)
        assert status == 1
        table = out[out.index("\nrule ") : out.index("(pass / warn / FAIL")]
        reports[concurrency] = (_report(path), table)
    assert reports["1"] == reports["8"]


def test_a_bad_concurrency_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for value in ["0", "-1", "65", "two"]:
        with pytest.raises(SystemExit) as caught:
            run_cli(["qa", "run", "s.json", "--concurrency", value], capsys)
        assert caught.value.code == 2, value
        assert "argument --concurrency" in capsys.readouterr().err, value
