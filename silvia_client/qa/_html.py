"""The HTML report of a QA run: one self-contained page for people to look at.

`html_report(run)` gives one HTML document: no external script, style, font or
image, and no script of its own (a Content-Security-Policy says so too, so a
browser would refuse one even if escaping failed). From the top:

- a summary bar: prompts, errors, warnings, prompts not run, and timings;
- a "failures only" switch: a checkbox that hides, with CSS alone
  (`report.css`), every passing prompt's matrix row and section;
- the rules-by-prompts matrix (`_html_matrix.py`): a row per prompt, linking
  to its section, a mark per rule (pass, warn, fail, did not apply, not run);
- the timing chart (`_html_chart.py`): each prompt's time to first text and
  whole turn, its label whole and wrapping, linking to its section;
- per prompt (`id="prompt-N"`): the verdict, the message, the scenario, the
  request and session ids, the timings, the turn as the notebook display
  renders it (`display.turn_html`: the text with its citation chips, then the
  numbered sources with their links), the rules it did not pass, and each
  finding with its evidence (findings are redacted by the checker: no provider).

Everything from the server or the script is escaped (`_html_text.h`) here, in
the matrix and chart, or by `turn_html`, and bidi controls are dropped, so no
server string can add markup, a link of its own, or reorder the page's text;
the page's only links of its own are `#prompt-N` and `#matrix` jumps. Control
characters and lone surrogates are written as visible escapes (the core's
`terminal_text`, here and over the whole page), so the page holds none raw.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from importlib import resources

from .. import __version__
from .._text import terminal_text
from ..display import turn_html
from ._html_chart import ChartRow, timing_chart
from ._html_matrix import rule_matrix
from ._html_text import h as _h
from ._html_text import seconds as _seconds
from ._html_text import verdict as _verdict
from ._results import PromptResult, RunResult, stop_line
from ._rule import Finding
from .checker import RuleOutcome

__all__ = ["html_report", "timing_chart"]

_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


@functools.cache
def _style() -> str:
    """`report.css`, beside this module, read once."""
    return resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")


def _spread(values: Sequence[float]) -> str:
    """`median 0.42 s, max 1.30 s` of some durations."""
    if not values:
        return "none"
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return f"median {_seconds(median)}, max {_seconds(ordered[-1])}"


def _summary(run: RunResult) -> str:
    items = [
        (len(run.prompts), "prompts"),
        (run.failed, "failed"),
        (run.not_run, "did not run"),
        (run.errors, "errors"),
        (run.warnings, "warnings"),
    ]
    bar = "".join(f"<li><strong>{count}</strong>{_h(label)}</li>" for count, label in items)
    timings = [result.observation.timings for result in run.ran]
    first = [t.first_text for t in timings if t is not None and t.first_text is not None]
    whole = [t.done for t in timings if t is not None and t.done is not None]
    bar += f"<li>first text: {_h(_spread(first))}</li><li>whole turn: {_h(_spread(whole))}</li>"
    return f'<ul class="bar">{bar}</ul>'


def _switch(run: RunResult) -> str:
    """The "failures only" checkbox: a sibling before what it hides (`report.css`)."""
    passed = sum(1 for result in run.prompts if _verdict(result)[0] == "ok")
    return (
        '<input type="checkbox" id="failures-only" class="switch">'
        '<label for="failures-only" class="switch">Failures only</label> '
        f'<span class="muted">(hides the {passed} prompt(s) that passed)</span>'
    )


def _chart(run: RunResult) -> str:
    rows = [
        ChartRow(
            f"{number}. {result.prompt.id}",
            result.observation.timings,
            anchor=f"prompt-{number}",
        )
        for number, result in enumerate(run.prompts, start=1)
        if result.ran and result.observation.timings is not None
    ]
    legend = '<p class="muted">Per prompt: time to the first text (light), to done (dark).</p>'
    chart = f'<div class="box">{timing_chart(rows)}</div>'
    return f'<section class="timings"><h2>Timings</h2>{legend}{chart}</section>'


def _stopped(run: RunResult) -> str:
    line = stop_line(run)
    return f'<p class="stopped">{_h(line)}</p>' if line else ""


def _meta(result: PromptResult) -> str:
    observation = result.observation
    rows: list[tuple[str, object]] = [("prompt", result.prompt.id)]
    if result.prompt.scenario:
        rows.append(("scenario", result.prompt.scenario))
    if result.prompt.continue_session:
        rows.append(("continues", "the previous prompt's session"))
    rows += [
        ("request id", observation.request_id or "none sent"),
        ("session id", observation.session_id or "none sent"),
        ("complete", "yes" if observation.complete else "no"),
    ]
    timings = observation.timings
    if result.ran and timings is not None:
        rows += [
            ("first byte", _seconds(timings.first_byte)),
            ("first text", _seconds(timings.first_text)),
            ("done", _seconds(timings.done)),
        ]
    if observation.failure:
        rows.append(("failure", observation.failure))
    cells = "".join(f"<dt>{_h(name)}</dt><dd>{_h(value)}</dd>" for name, value in rows)
    return f'<dl class="meta">{cells}</dl>'


def _finding(finding: Finding) -> str:
    evidence = json.dumps(finding.evidence, ensure_ascii=False, indent=1)
    return (
        f'<li class="{_h(finding.severity)}"><strong>{_h(finding.rule)}</strong> '
        f"({_h(finding.severity)}): {_h(finding.message)}<pre>{_h(evidence)}</pre></li>"
    )


def _unpassed(outcomes: Sequence[RuleOutcome]) -> str:
    shown = [outcome for outcome in outcomes if outcome.status in ("fail", "warn")]
    if not shown:
        return ""
    names = ", ".join(f"{_h(outcome.rule.id)} ({_h(outcome.status)})" for outcome in shown)
    return f'<p class="muted">Rules not passed: {names}</p>'


def _prompt(number: int, result: PromptResult, web_url: str | None) -> str:
    css, label = _verdict(result)
    # Open where there is something to see; a passing prompt opens with a click.
    opened = " open" if css in ("fail", "warn") else ""
    parts = [
        f'<details class="prompt {css}" id="prompt-{number}"{opened}><summary>',
        f'<h2>{number}. {_h(result.prompt.id)} <span class="verdict">{_h(label)}</span></h2>',
        ' <a class="top" href="#matrix">back to the matrix</a>',
        f'</summary><p><span class="muted">You:</span> {_h(result.prompt.message)}</p>',
        _meta(result),
    ]
    if result.did_run:
        parts.append(
            f'<div class="turn">{turn_html(result.observation.turn, web_url=web_url)}</div>'
        )
        parts.append(_unpassed(result.result.outcomes))
    findings = result.result.findings
    if findings:
        items = "".join(_finding(finding) for finding in findings)
        parts.append(f'<ol class="findings">{items}</ol>')
    parts.append("</details>")
    return "".join(parts)


def html_report(run: RunResult, *, web_url: str | None = None) -> str:
    """The run as one self-contained HTML document (no script; everything escaped).

    `web_url` (the web app's origin, default `SILVIA_WEB_URL`) makes account
    links absolute, as in the notebook display.
    """
    name = run.script.name or "silvia qa"
    prompts = "".join(
        _prompt(number, result, web_url) for number, result in enumerate(run.prompts, start=1)
    )
    if all(_verdict(result)[0] == "ok" for result in run.prompts):
        prompts += '<p class="none-failed muted">Every prompt passed.</p>'
    return terminal_text(  # what `turn_html` wrote too: no raw control, no lone surrogate
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>silvia qa: {_h(name)}</title><style>\n{_style()}</style></head>"
        "<body><header>"
        f"<h1>silvia qa: {_h(name)}</h1>"
        f'<p class="muted">against {_h(run.target)}; silvia-client {_h(__version__)}</p>'
        f"{_summary(run)}{_stopped(run)}</header>"
        f"{_switch(run)}{rule_matrix(run)}{_chart(run)}"
        f"<main>{prompts}</main></body></html>\n"
    )
