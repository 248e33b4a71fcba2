"""Reports of a QA run: a table for the terminal, JUnit XML for CI, JSON, and an HTML page.

The table has a row per rule and a column per prompt (numbered; the prompts
are listed above it), each cell `pass`, `warn`, `FAIL`, or `-` (the rule did
not apply: no events arrived, the turn was not reloaded, ...). The findings
follow, one line each.

JUnit XML has one `<testcase>` per prompt and rule (`classname` the prompt,
`name` the rule id), so a CI dashboard shows which rule broke on which prompt:
a finding of error severity is a `<failure>`, a rule that did not apply is
`<skipped>`, and warnings are passing cases with the warning in
`<system-out>`. The JSON report holds the same, with every finding's evidence.

`write_html` writes the page people look at (built in `_html.py`): a summary,
a timing chart, and per prompt the turn with its citations and the findings.

Everything here is built from findings, which are already redacted, and from
the script: no report holds a provider or the token.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from .. import __version__
from ..chat import Timings
from ._rule import Finding, Rule
from .checker import RuleOutcome, Status, prompt_rules
from .rules import EXPECTATIONS, TIMING
from .runner import PromptResult, RunResult

__all__ = [
    "format_finding",
    "format_report",
    "format_table",
    "format_timings",
    "json_report",
    "junit_xml",
    "seconds_text",
    "stop_line",
    "turn_ids",
    "write_html",
    "write_json",
    "write_junit",
]

_CELL: dict[Status, str] = {"pass": "pass", "warn": "warn", "fail": "FAIL", "skip": "-"}
_EVIDENCE_CHARS = 240
_MESSAGE_CHARS = 60


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def turn_ids(request_id: str | None, session_id: str | None) -> str:
    """`request req_1, session sess_2` (what the server sent of the two), or ''."""
    ids = [
        f"request {request_id}" if request_id else "",
        f"session {session_id}" if session_id else "",
    ]
    return ", ".join(part for part in ids if part)


def format_finding(finding: Finding, prompt: str | None = None) -> str:
    """`FAIL  rule-id  [prompt]  message  {evidence}  (request ..., session ...)` on one line."""
    level = "FAIL" if finding.severity == "error" else "warn"
    where = f"  [{prompt}]" if prompt else ""
    evidence = json.dumps(finding.evidence, ensure_ascii=False, separators=(",", ":"))
    ids = turn_ids(finding.request_id, finding.session_id)
    return (
        f"{level}  {finding.rule}{where}  {finding.message}  {_short(evidence, _EVIDENCE_CHARS)}"
        + (f"  ({ids})" if ids else "")
    )


def seconds_text(value: float | None, never: str = "-") -> str:
    """`70 ms` under a second, `1.25 s` from one on; `never` for a moment not reached."""
    if value is None:
        return never
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _timings_dict(timings: Timings | None) -> dict[str, float | None] | None:
    if timings is None:
        return None
    return {
        "first_byte": timings.first_byte,
        "first_text": timings.first_text,
        "done": timings.done,
    }


def format_timings(timings: Timings | None) -> str:
    """`first text 120 ms, done 1.30 s` (`-` for a moment the turn never reached)."""
    if timings is None:
        return "no timings"
    return f"first text {seconds_text(timings.first_text)}, done {seconds_text(timings.done)}"


def stop_line(run: RunResult) -> str | None:
    """Why the run stopped short, in one line; None when every prompt ran."""
    not_run = len(run.prompts) - len(run.ran)
    if run.access_failure is not None:
        return f"stopped: {run.access_failure.message}; {not_run} prompt(s) not run"
    if run.interrupted:
        return f"interrupted: {not_run} prompt(s) not run"
    return None


def _rules(run: RunResult) -> list[Rule]:
    """The table's rows: the run's rules, then those the prompts' expectations add."""
    extra = {rule.id: rule for result in run.prompts for rule in prompt_rules(result.prompt.expect)}
    return [*run.rules, *(rule for rule in (EXPECTATIONS, TIMING) if rule.id in extra)]


def _outcome(result: PromptResult, rule: Rule) -> RuleOutcome | None:
    for outcome in result.result.outcomes:
        if outcome.rule.id == rule.id:
            return outcome
    return None


def format_table(run: RunResult) -> str:
    """The prompts, numbered, then a row per rule with a cell per prompt."""
    lines = ["prompts:"]
    width_id = max(len(result.prompt.id) for result in run.prompts)
    for number, result in enumerate(run.prompts, start=1):
        scenario = f" (scenario {result.prompt.scenario})" if result.prompt.scenario else ""
        ran = f" [{format_timings(result.observation.timings)}]" if result.ran else " [not run]"
        lines.append(
            f"  {number:>3}  {result.prompt.id:<{width_id}}  "
            f"{_short(result.prompt.message, _MESSAGE_CHARS)}{scenario}{ran}"
        )
    rules = _rules(run)
    width_rule = max(len("rule"), *(len(rule.id) for rule in rules))
    width_cell = max(4, len(str(len(run.prompts))))
    header = "  ".join(f"{n:>{width_cell}}" for n in range(1, len(run.prompts) + 1))
    lines += ["", f"{'rule':<{width_rule}}  {header}"]
    for rule in rules:
        cells = []
        for result in run.prompts:
            outcome = _outcome(result, rule)
            cells.append(f"{_CELL[outcome.status] if outcome else '-':>{width_cell}}")
        lines.append(f"{rule.id:<{width_rule}}  {'  '.join(cells)}")
    lines += ["", "(pass / warn / FAIL; - where the rule did not apply)"]
    return "\n".join(lines)


def _verdict(run: RunResult) -> str:
    if run.access_failure is not None:
        return "STOPPED"
    if run.errors:
        return "FAIL"
    return "INTERRUPTED" if run.interrupted else "ok"


def format_report(run: RunResult) -> str:
    """The table, the findings, and a verdict line."""
    parts = [f"silvia qa: {len(run.prompts)} prompt(s) against {run.target}", "", format_table(run)]
    lines = [
        format_finding(finding, result.prompt.id)
        for result in run.prompts
        for finding in result.result.findings
    ]
    if lines:
        parts += ["", "findings:", *lines]
    stopped = stop_line(run)
    if stopped is not None:
        parts += ["", stopped]
    prompts = f"{len(run.prompts)} prompt(s)"
    if stopped is not None:
        prompts = f"{len(run.ran)} of {prompts}"
    parts += [
        "",
        f"{_verdict(run)}: {run.errors} error(s), {run.warnings} warning(s) over "
        f"{prompts} and {len(_rules(run))} rule(s)",
    ]
    return "\n".join(parts)


def junit_xml(run: RunResult) -> bytes:
    """JUnit XML: a test case per prompt and rule."""
    rules = _rules(run)
    cases: list[ET.Element] = []
    failures = skipped = 0
    for result in run.prompts:
        for rule in rules:
            outcome = _outcome(result, rule)
            case = ET.Element(
                "testcase", classname=f"silvia.qa.{result.prompt.id}", name=rule.id, time="0"
            )
            if outcome is None or outcome.status == "skip":
                skipped += 1
                reason = outcome.reason if outcome is not None else "no expectations"
                ET.SubElement(case, "skipped", message=reason or "not applicable")
            elif outcome.status == "fail":
                failures += 1
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=outcome.findings[0].message,
                    type=rule.id,
                )
                failure.text = "\n".join(format_finding(f) for f in outcome.findings)
            elif outcome.status == "warn":
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(format_finding(f) for f in outcome.findings)
            cases.append(case)
    name = run.script.name or "silvia qa"
    counts = {
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
    }
    root = ET.Element("testsuites", {"name": "silvia qa", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": name, **counts})
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="target", value=run.target)
    ET.SubElement(properties, "property", name="silvia-client", value=__version__)
    stopped = stop_line(run)
    if stopped is not None:
        ET.SubElement(properties, "property", name="stopped", value=stopped)
    for result in run.ran:
        timings = format_timings(result.observation.timings)
        ET.SubElement(properties, "property", name=f"timings.{result.prompt.id}", value=timings)
    suite.extend(cases)
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"


def json_report(run: RunResult) -> dict[str, object]:
    """The run as JSON: rules, and per prompt each rule's status and every finding."""
    rules = _rules(run)
    prompts = []
    for result in run.prompts:
        observation = result.observation
        statuses: dict[str, object] = {}
        for rule in rules:
            outcome = _outcome(result, rule)
            if outcome is None:
                statuses[rule.id] = {"status": "skip", "reason": "no expectations"}
            elif outcome.status == "skip":
                statuses[rule.id] = {"status": "skip", "reason": outcome.reason}
            else:
                statuses[rule.id] = {"status": outcome.status}
        prompts.append(
            {
                "id": result.prompt.id,
                "message": result.prompt.message,
                "scenario": result.prompt.scenario,
                "expect": None if result.prompt.expect is None else result.prompt.expect.to_dict(),
                "ran": result.ran,
                "session_id": observation.session_id,
                "request_id": observation.request_id,
                "complete": observation.complete,
                "timings": _timings_dict(observation.timings),
                "events": len(observation.events),
                "ok": result.result.ok,
                "rules": statuses,
                "findings": [finding.to_dict() for finding in result.result.findings],
            }
        )
    return {
        "tool": "silvia qa",
        "version": __version__,
        "script": run.script.name,
        "target": run.target,
        "ok": run.ok,
        "exit_status": run.exit_status,
        "errors": run.errors,
        "warnings": run.warnings,
        "not_run": len(run.prompts) - len(run.ran),
        "interrupted": run.interrupted,
        "access_failure": None
        if run.access_failure is None
        else {
            "kind": run.access_failure.kind,
            "message": run.access_failure.message,
            "request_id": run.access_failure.request_id,
        },
        "rules": [
            {"id": rule.id, "severity": rule.severity, "description": rule.description}
            for rule in rules
        ],
        "prompts": prompts,
    }


def write_html(run: RunResult, path: str | Path, *, web_url: str | None = None) -> None:
    """Write `html_report(run)`: one self-contained page (see `_html.py`)."""
    from ._html import html_report

    Path(path).write_text(html_report(run, web_url=web_url), encoding="utf-8")


def write_junit(run: RunResult, path: str | Path) -> None:
    """Write `junit_xml(run)` to `path`."""
    Path(path).write_bytes(junit_xml(run))


def write_json(run: RunResult, path: str | Path) -> None:
    """Write `json_report(run)` to `path`, as UTF-8."""
    text = json.dumps(json_report(run), ensure_ascii=False, indent=2)
    Path(path).write_text(text + "\n", encoding="utf-8")
