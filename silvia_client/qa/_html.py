"""The HTML report of a QA run: one self-contained page for people to look at.

`html_report(run)` gives one HTML document: no external script, style, font or
image, and no script of its own (a Content-Security-Policy says so too, so a
browser would refuse one even if escaping failed). It holds:

- a summary bar: prompts, errors, warnings, prompts not run, and timings;
- an inline SVG chart of each prompt's time to first text and whole turn;
- per prompt: the verdict, the message, the scenario, the request and session
  ids, the timings, the turn as the notebook display renders it
  (`display.turn_html`: the text with its citation chips, then the numbered
  sources with their links), the rules it did not pass, and each finding with
  its evidence (findings are redacted by the checker: no provider).

Everything from the server or the script is escaped here or by `turn_html`,
and bidi controls are dropped, so no server string can add markup, a link of
its own, or reorder the page's text; control characters and lone surrogates
are written as visible escapes (the core's `terminal_text`, here and over the
whole page), so the page encodes and holds none raw.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence

from .. import __version__
from .._scrub import terminal_text
from ..chat import Timings
from ..display import turn_html
from ._rule import Finding
from .checker import RuleOutcome
from .runner import PromptResult, RunResult

__all__ = ["html_report", "timing_chart"]

_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

_STYLE = """
:root { --error: #b3261e; --warn: #8a5a00; --ok: #1e6b34; --muted: #5f6368; }
body {
  font: 15px/1.5 system-ui, sans-serif; color: #1f1f1f;
  margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem 3rem;
}
h1 { font-size: 1.4rem; margin: 0.5rem 0 0.25rem; }
h2 { font-size: 1.1rem; margin: 0 0 0.5rem; display: inline; }
summary { cursor: pointer; }
.muted, .meta dt { color: var(--muted); }
.bar { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; padding: 0; }
.bar li { border: 1px solid #dadce0; border-radius: 0.4rem; padding: 0.3rem 0.7rem; }
.bar strong { font-size: 1.1rem; margin-right: 0.3rem; }
.stopped { border-left: 4px solid var(--error); padding: 0.3rem 0.7rem; background: #fce8e6; }
.prompt {
  border: 1px solid #dadce0; border-left-width: 6px; border-radius: 0.4rem;
  padding: 0.8rem 1rem; margin: 1rem 0;
}
.prompt.fail { border-left-color: var(--error); }
.prompt.warn { border-left-color: var(--warn); }
.prompt.ok { border-left-color: var(--ok); }
.prompt.not-run { border-left-color: #bdc1c6; opacity: 0.75; }
.verdict {
  font-size: 0.8rem; font-weight: 600; color: #fff; background: #80868b;
  padding: 0.05rem 0.45rem; border-radius: 0.3rem;
}
.fail .verdict { background: var(--error); }
.warn .verdict { background: var(--warn); }
.ok .verdict { background: var(--ok); }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 0.8rem; }
.meta dd { margin: 0; font: 0.85rem ui-monospace, monospace; overflow-wrap: anywhere; }
.turn { background: #f8f9fa; border-radius: 0.4rem; padding: 0.5rem 0.8rem; }
.turn, .findings { overflow-wrap: anywhere; }
.silvia-chip { font-size: 0.75em; padding: 0 0.1em; }
.silvia-sources { font-size: 0.9rem; }
.silvia-quote { color: var(--muted); }
.findings li { margin: 0.4rem 0; }
.findings .error strong { color: var(--error); }
.findings .warning strong { color: var(--warn); }
pre {
  background: #f1f3f4; padding: 0.4rem 0.6rem; border-radius: 0.3rem;
  font-size: 0.8rem; white-space: pre-wrap; overflow-wrap: anywhere;
}
.timings h2 { display: block; }
.chart text { font: 11px system-ui, sans-serif; fill: #3c4043; }
.chart .first { fill: #8ab4f8; }
.chart .total { fill: #1a73e8; }
"""


def _h(text: object) -> str:
    """Text from the server or the script, as HTML text or an attribute value."""
    return html.escape(terminal_text(str(text)), quote=True)


def _verdict(result: PromptResult) -> tuple[str, str]:
    """(CSS class, label) of a prompt's verdict."""
    if not result.did_run:
        return "not-run", "not run"
    checked = result.result
    if checked.errors:
        return "fail", "FAIL"
    return ("warn", "warn") if checked.warnings else ("ok", "ok")


def _seconds(value: float | None) -> str:
    from .report import seconds_text

    if value is not None and not 0 <= value <= _CHART_LONGEST:
        return f"{value:g} s"  # NaN, infinite, negative or past a day: as it is, and short
    return seconds_text(value, "not reached")


def _spread(values: Sequence[float]) -> str:
    """`median 0.42 s, max 1.30 s` of some durations."""
    if not values:
        return "none"
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return f"median {_seconds(median)}, max {_seconds(ordered[-1])}"


_CHART_LABEL = 150  # px for the prompt labels
_CHART_BARS = 520  # px for the bars
_CHART_ROW = 26  # px per prompt
_CHART_LONGEST = 86_400.0  # s: a longer time (or an infinite one) is drawn as a day
_CHART_SHORTEST = 1e-6  # s: when the longest time is shorter, the scale is 0 (flat bars)


def _drawn(seconds: float) -> float:
    """A time as the chart draws it: clamped to 0 to a day (NaN and negatives are 0)."""
    return min(seconds, _CHART_LONGEST) if seconds > 0 else 0.0


def _ticks(longest: float) -> list[float]:
    """Round gridline values from 0 past `longest` (a `_drawn` time): 4 to 8 of them.

    Only 0 when `longest` is under `_CHART_SHORTEST`: such a chart has no scale.
    """
    if longest < _CHART_SHORTEST:
        return [0.0]
    step = 10.0 ** math.floor(math.log10(longest / 4))
    for factor in (1, 2, 5, 10):
        if longest / (step * factor) <= 6:
            step *= factor
            break
    return [step * i for i in range(math.ceil(longest / step) + 1)]


def timing_chart(rows: Sequence[tuple[str, Timings]]) -> str:
    """An inline SVG of each prompt's time to first text and to `done`, on one scale.

    Any float draws: times are clamped to 0 to a day, and when every time is
    (next to) 0 the scale is 0 and the bars are flat. The tooltips say the times.
    """
    times = [t for _, timings in rows for t in (timings.first_text, timings.done) if t is not None]
    if not times:
        return '<p class="muted">No timings: no prompt reached its first text.</p>'
    ticks = _ticks(max(_drawn(t) for t in times))
    scale = _CHART_BARS / ticks[-1] if ticks[-1] > 0 else 0.0
    height = _CHART_ROW * len(rows) + 24
    width = _CHART_LABEL + _CHART_BARS + 60
    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        "<title>Time to first text (light) and whole turn (dark), per prompt</title>"
    ]
    for tick in ticks:
        x = _CHART_LABEL + tick * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 18}" stroke="#e0e0e0"/>'
            f'<text x="{x:.1f}" y="{height - 4}" text-anchor="middle">{tick:g} s</text>'
        )
    for index, (label, timings) in enumerate(rows):
        y = index * _CHART_ROW + 4
        tip = f"{label}: first text {_seconds(timings.first_text)}, done {_seconds(timings.done)}"
        parts.append(
            f"<g><title>{_h(tip)}</title>"
            f'<text x="{_CHART_LABEL - 6}" y="{y + 13}" text-anchor="end">{_h(label[:24])}</text>'
        )
        for css, value, offset in (("total", timings.done, 0), ("first", timings.first_text, 9)):
            if value is not None:
                parts.append(
                    f'<rect class="{css}" x="{_CHART_LABEL}" y="{y + offset}" '
                    f'width="{max(_drawn(value) * scale, 1):.1f}" height="8"/>'
                )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


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


def _chart(run: RunResult) -> str:
    rows = [
        (f"{number}. {result.prompt.id}", result.observation.timings)
        for number, result in enumerate(run.prompts, start=1)
        if result.ran and result.observation.timings is not None
    ]
    legend = '<p class="muted">Per prompt: time to the first text (light), to done (dark).</p>'
    return f'<section class="timings"><h2>Timings</h2>{legend}{timing_chart(rows)}</section>'


def _stopped(run: RunResult) -> str:
    from .report import stop_line

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
    return terminal_text(  # what `turn_html` wrote too: no raw control, no lone surrogate
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>silvia qa: {_h(name)}</title><style>{_STYLE}</style></head>"
        "<body><header>"
        f"<h1>silvia qa: {_h(name)}</h1>"
        f'<p class="muted">against {_h(run.target)}; silvia-client {_h(__version__)}</p>'
        f"{_summary(run)}{_stopped(run)}</header>{_chart(run)}"
        f"<main>{prompts}</main></body></html>\n"
    )
