"""Reports of a QA run: a table for the terminal, JUnit XML for CI, JSON, and an HTML page.

The table: a row per rule, a column per numbered prompt (`pass`, `warn`, `FAIL`, `-`
did not apply, `n/r` not run), laid out the other way (`compact_table`) when wider
than the given width; then the findings, one line each. JUnit: a `<testcase>` per
prompt and rule (an error finding a `<failure>`, a rule that did not apply
`<skipped>`, warnings in `<system-out>`). The HTML page is built in `_html.py`.
Reports are built from redacted findings, and every writer puts its text through
the cleaner for its medium (`_text.py`), so no control character reaches a
terminal raw and every report parses.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import __version__
from .._text import escaped, terminal_text
from ..chat import Timings
from ._rule import format_finding, short, turn_ids
from .runner import (
    MARKS,
    RunResult,
    format_timings,
    prompt_status,
    rule_outcome,
    seconds_text,
    stop_line,
    table_rules,
)

__all__ = [
    "compact_table",
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

# What XML 1.0 forbids beyond what `terminal_text` escapes (its Char production).
_XML_EXTRA = re.compile("[\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` fit for XML 1.0 (JUnit): `terminal_text`, and U+FFFE/U+FFFF escaped."""
    return _XML_EXTRA.sub(escaped, terminal_text(text))


def json_clean(value: Any) -> Any:
    """A JSON value for a report file, every string in it (keys too) through `terminal_text`."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {
            (terminal_text(key) if isinstance(key, str) else key): json_clean(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [json_clean(item) for item in value]
    return value


_MESSAGE_CHARS = 60


def format_table(run: RunResult, width: int | None = None) -> str:
    """The prompts, numbered, then a row per rule with a cell per prompt.

    With `width`, a table wider than that is laid out the other way instead
    (`compact_table`): a row per prompt, a one-character column per rule.
    """
    if width is None:
        return _wide_table(run)
    wide = _wide_table(run).splitlines()
    start = next(i for i, line in enumerate(wide) if line.startswith("rule "))
    if max(len(line) for line in wide[start:]) > width:
        return compact_table(run, width)
    return "\n".join(_fit(line, width) for line in wide)  # the prompts' lines cut to fit


def _wide_table(run: RunResult) -> str:
    lines = ["prompts:"]
    width_id = max(len(result.prompt.id) for result in run.prompts)
    for number, result in enumerate(run.prompts, start=1):
        scenario = f" (scenario {result.prompt.scenario})" if result.prompt.scenario else ""
        ran = f"[{format_timings(result.observation.timings)}]" if result.did_run else "[not run]"
        # The verdict before the message: a line cut to the width loses the message's end.
        lines.append(
            f"  {number:>3}  {result.prompt.id:<{width_id}}  {ran}  "
            f"{short(result.prompt.message, _MESSAGE_CHARS)}{scenario}"
        )
    rules = table_rules(run)
    width_rule = max(len("rule"), *(len(rule.id) for rule in rules))
    width_cell = max(4, len(str(len(run.prompts))))
    header = "  ".join(f"{n:>{width_cell}}" for n in range(1, len(run.prompts) + 1))
    lines += ["", f"{'rule':<{width_rule}}  {header}"]
    for rule in rules:
        cells = []
        for result in run.prompts:
            outcome = rule_outcome(result, rule)
            cells.append(f"{MARKS[outcome.status][0] if outcome else '-':>{width_cell}}")
        lines.append(f"{rule.id:<{width_rule}}  {'  '.join(cells)}")
    lines += ["", "(pass / warn / FAIL; - where the rule did not apply; n/r not run)"]
    return "\n".join(lines)


_ID_CHARS = 24


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def compact_table(run: RunResult, width: int) -> str:
    """A row per prompt, a column per rule (numbered, with a legend): for many prompts.

    Every line is at most `width` characters; the rules are listed above, by number.
    """
    rules = table_rules(run)
    lines = ["rules:"]
    lines += [_fit(f"  {n:>2}  {rule.id}", width) for n, rule in enumerate(rules, start=1)]
    width_id = min(_ID_CHARS, max(len(result.prompt.id) for result in run.prompts))
    numbers = "".join(f"{n:>3}" for n in range(1, len(rules) + 1))
    lines += ["", _fit(f"{'#':>4}  {'prompt':<{width_id}} {numbers}", width)]
    for number, result in enumerate(run.prompts, start=1):
        cells = ""
        for rule in rules:
            outcome = rule_outcome(result, rule)
            cells += f"{MARKS[outcome.status][1] if outcome else '-':>3}"
        timings = format_timings(result.observation.timings) if result.did_run else "not run"
        prompt_id = short(result.prompt.id, width_id)
        lines.append(_fit(f"{number:>4}  {prompt_id:<{width_id}} {cells}  {timings}", width))
    legend = "(. pass, w warn, F FAIL, - the rule did not apply, ~ not run; --wide: rules as rows)"
    lines += ["", _fit(legend, width)]
    return "\n".join(lines)


def format_report(run: RunResult, width: int | None = None) -> str:
    """The table (`format_table(run, width)`), the findings, and a verdict line."""
    parts = [
        f"silvia qa: {len(run.prompts)} prompt(s) against {run.target}",
        "",
        format_table(run, width),
    ]
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
    verdict = "FAIL" if run.errors else "INTERRUPTED" if run.interrupted else "ok"
    if run.access_failure is not None:
        verdict = "STOPPED"
    parts += [
        "",
        f"prompts: {len(run.prompts) - run.failed - run.not_run} passed, {run.failed} failed, "
        f"{run.not_run} did not run",
        f"{verdict}: {run.errors} error(s), {run.warnings} warning(s) over "
        f"{prompts} and {len(table_rules(run))} rule(s)",
    ]
    return terminal_text("\n".join(parts))


def junit_xml(run: RunResult) -> bytes:
    """JUnit XML: a test case per prompt and rule, each timed by its prompt's turn."""
    rules = table_rules(run)
    total = 0.0
    cases: list[ET.Element] = []
    failures = skipped = errors = 0
    for result in run.prompts:
        # Its measured turn time: to `done`, else the last moment reached; 0 if none.
        timed = (result.observation.timings if result.did_run else None) or Timings()
        reached = (timed.done, timed.first_text, timed.first_byte)
        seconds = next((t for t in reached if t is not None), 0.0)
        total += seconds
        for rule in rules:
            outcome = rule_outcome(result, rule)
            case = ET.Element(
                "testcase",
                classname=f"silvia.qa.{result.prompt.id}",
                name=rule.id,
                time=f"{seconds:.3f}",
            )
            if outcome is None or outcome.status in ("skip", "not_run"):
                skipped += 1
                reason = outcome.reason if outcome is not None else "no expectations"
                ET.SubElement(case, "skipped", message=reason or "not applicable")
            elif outcome.status == "fail":
                # A prompt that could not run: its one cause is an error, not a failure.
                cause = result.result.not_run
                errors, failures = errors + cause, failures + (not cause)
                element = ET.SubElement(
                    case,
                    "error" if cause else "failure",
                    message=outcome.findings[0].message,
                    type="not-run" if cause else rule.id,
                )
            elif outcome.status == "warn":
                element = ET.SubElement(case, "system-out")
            if outcome is not None and outcome.findings:
                element.text = "\n".join(format_finding(f) for f in outcome.findings)
            cases.append(case)
    name = run.script.name or "silvia qa"
    counts = {
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
    }
    root = ET.Element("testsuites", {"name": "silvia qa", **counts})
    root.set("time", f"{total:.3f}")
    suite = ET.SubElement(root, "testsuite", {"name": name, **counts, "time": f"{total:.3f}"})
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
    for element in root.iter():  # every text and attribute cleaned: the document is well-formed
        element.text = element.text and xml_text(element.text)
        element.tail = element.tail and xml_text(element.tail)
        for key, value in element.attrib.items():
            element.set(key, xml_text(value))
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"


def json_report(run: RunResult) -> dict[str, object]:
    """The run as JSON: rules, and per prompt each rule's status and every finding."""
    rules = table_rules(run)
    prompts = []
    for result in run.prompts:
        observation, cause = result.observation, result.result.cause
        not_run = cause.message if cause is not None else observation.failure or "not run"
        statuses: dict[str, object] = {}
        for rule in rules:
            outcome = rule_outcome(result, rule)
            if outcome is None:
                statuses[rule.id] = {"status": "skip", "reason": "no expectations"}
            elif outcome.status in ("skip", "not_run"):
                statuses[rule.id] = {"status": outcome.status, "reason": outcome.reason}
            else:
                statuses[rule.id] = {"status": outcome.status}
        prompts.append(
            {
                "id": result.prompt.id,
                "message": result.prompt.message,
                "scenario": result.prompt.scenario,
                "expect": None if result.prompt.expect is None else result.prompt.expect.to_dict(),
                "ran": result.ran,
                "status": prompt_status(result),
                "not_run": None if result.did_run else not_run,
                "session_id": observation.session_id,
                "request_id": observation.request_id,
                "complete": observation.complete,
                "timings": None if observation.timings is None else asdict(observation.timings),
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
        "failed": run.failed,
        "not_run": run.not_run,
        "interrupted": run.interrupted,
        "access_failure": None if run.access_failure is None else asdict(run.access_failure),
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
    text = json.dumps(json_clean(json_report(run)), ensure_ascii=False, indent=2)
    Path(path).write_text(text + "\n", encoding="utf-8")
