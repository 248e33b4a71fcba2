"""The HTML report of a QA run: one self-contained page for people to look at.

No external script, style, font or image, and no script of its own (a
Content-Security-Policy says so too). From the top: a summary bar; a
"failures only" checkbox that hides, with CSS alone (`report.css`), every
passing prompt's matrix row and section (by the verdict class each carries);
the rules-by-prompts matrix; the timing chart; and per prompt its verdict,
message, ids, timings, the turn as `display.turn_html` renders it (vendor
names hidden, as in every report), and each finding with its evidence
(already redacted by the checker).

Everything from the server or the script goes through `h` (escaped, bidi
controls dropped, control characters as visible escapes, as `terminal_text`
writes them, here and over the whole page), so no server string adds markup or
a link; the page's only links of its own are `#prompt-N` and `#matrix` jumps.
The chart never cuts a label: it wraps it (`_wrap`), with widths estimated on the
wide side per character (`_em`), which the browser test checks on rendered boxes.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from .. import __version__
from .._text import terminal_text
from ..chat import Timings
from ..display import turn_html
from ._privacy import VENDOR, VENDOR_NAME
from ._rule import Finding
from .checker import RuleOutcome
from .runner import (
    MARKS,
    PromptResult,
    RunResult,
    prompt_status,
    rule_outcome,
    seconds_text,
    stop_line,
    table_rules,
)

DAY = 86_400.0  # s: a longer time (or an infinite one) is drawn as a day


def h(text: object) -> str:
    """Text from the server or the script, as HTML text or an attribute value."""
    return html.escape(terminal_text(str(text)), quote=True)


def verdict(result: PromptResult) -> tuple[str, str]:
    """(CSS class, label) of a prompt's verdict."""
    status = prompt_status(result)
    return status.replace("_", "-"), {"fail": "FAIL", "not_run": "not run"}.get(status, status)


def seconds(value: float | None) -> str:
    """`70 ms`, `1.25 s`, or `not reached`; an odd float (NaN, inf, past a day) as it is."""
    if value is not None and not 0 <= value <= DAY:
        return f"{value:g} s"  # NaN, infinite, negative or past a day: as it is, and short
    return seconds_text(value, "not reached")


LEGEND = "✓ pass, ! warn, ✗ fail, – the rule did not apply, ○ not run"


def _cell(outcome: RuleOutcome | None) -> str:
    tip = "no expectations" if outcome is None else outcome.reason or ""
    if outcome is not None and outcome.findings:
        more = len(outcome.findings) - 1
        tip = outcome.findings[0].message + (f" (and {more} more)" if more else "")
    status = outcome.status if outcome is not None else "skip"
    title = f' title="{h(tip)}"' if tip and status != "pass" else ""
    return f'<td class="m {status.replace("_", "-")}"{title}>{MARKS[status][2]}</td>'


def rule_matrix(run: RunResult) -> str:
    """The matrix as an HTML section: a row per prompt, a column per rule."""
    rules = table_rules(run)
    header = "".join(
        f'<th scope="col" class="rule" title="{h(rule.description)}"><span>{h(rule.id)}</span></th>'
        for rule in rules
    )
    rows = ""
    for number, result in enumerate(run.prompts, start=1):
        css, label = verdict(result)
        cells = "".join(_cell(rule_outcome(result, rule)) for rule in rules)
        rows += (
            f'<tr class="{css}"><th scope="row"><a href="#prompt-{number}" title="{h(label)}">'
            f"{number}. {h(result.prompt.id)}</a></th>{cells}</tr>"
        )
    return (
        '<section class="matrix" id="matrix"><h2>Rules by prompt</h2>'
        f'<p class="muted">{h(LEGEND)}. A prompt links to its section.</p>'
        '<div class="box"><table><thead><tr><th scope="col" class="prompt-col">prompt</th>'
        f"{header}</tr></thead>"
        f"<tbody>{rows}</tbody></table></div></section>"
    )


_FONT = 11  # px: the labels' and ticks' font size (`.chart text` in the style sheet)
_LINE = 13  # px per line of a label
_LABEL_MOST = 230  # px: a label longer than this wraps
_GAP = 10  # px between the label column and the bars
_BARS = 520  # px for the bars
_ROW = 26  # px per prompt, at least
_AXIS = 22  # px above the rows, and below, for the ticks
_PAD = 8  # px right of the bars
_SHORTEST = 1e-6  # s: when the longest time is shorter, the scale is 0 (flat bars)
_BREAKS = re.compile(r"[^-_./\s]*[-_./\s]?")  # a label's pieces, each ending where it may break


@dataclass(frozen=True)
class ChartRow:
    """One prompt in the chart: its label, its timings, and the id of its section."""

    label: str
    timings: Timings
    anchor: str | None = None


def _em(char: str) -> float:
    """A character's width in em, on the wide side of common sans-serif fonts."""
    if char in "il.,:;|!'` ":
        return 0.4
    if char in "MWmw@%" or char.isupper():
        return 1.0
    if char.isascii():
        return 0.68
    if unicodedata.east_asian_width(char) in "WF" or ord(char) > 0xFFFF:
        return 1.3  # wide: CJK, fullwidth forms, emoji
    return 1.05


def _width(text: str) -> float:
    return sum(_em(char) for char in text) * _FONT


def _wrap(label: str) -> list[str]:
    """`label` in lines of at most `_LABEL_MOST` px (estimated), broken where it may be."""
    lines: list[str] = []
    line, width = "", 0.0
    for piece in (piece for piece in _BREAKS.findall(label) if piece):
        size = _width(piece)
        if width + size <= _LABEL_MOST:
            line, width = line + piece, width + size
            continue
        if line:
            lines.append(line)
            line, width = "", 0.0
        for char in piece:  # a piece wider than a line: broken anywhere
            size = _width(char)
            if line and width + size > _LABEL_MOST:
                lines.append(line)
                line, width = "", 0.0
            line, width = line + char, width + size
    if line:
        lines.append(line)
    return [line.strip() or line for line in lines] or [""]


def _drawn(value: float) -> float:
    """A time as the chart draws it: clamped to 0 to a day (NaN and negatives are 0)."""
    return min(value, DAY) if value > 0 else 0.0


def _ticks(longest: float) -> list[float]:
    """Round gridline values from 0 past `longest` (a `_drawn` time): 4 to 8 of them.

    Only 0 when `longest` is under `_SHORTEST`: such a chart has no scale.
    """
    if longest < _SHORTEST:
        return [0.0]
    step = 10.0 ** math.floor(math.log10(longest / 4))
    for factor in (1, 2, 5, 10):
        if longest / (step * factor) <= 6:
            step *= factor
            break
    return [step * i for i in range(math.ceil(longest / step) + 1)]


def _chart_row(
    row: ChartRow, lines: list[str], top: float, height: float, left: float, scale: float
) -> str:
    timings = row.timings
    tip = f"{row.label}: first text {seconds(timings.first_text)}, done {seconds(timings.done)}"
    first_line = top + (height - _LINE * len(lines)) / 2 + _FONT
    spans = "".join(
        f'<tspan x="0" y="{first_line + index * _LINE:.1f}">{h(line)}</tspan>'
        for index, line in enumerate(lines)
    )
    parts = [f"<g><title>{h(tip)}</title><text>{spans}</text>"]
    bar_top = top + (height - 17) / 2
    for css, value, offset in (("total", timings.done, 0), ("first", timings.first_text, 9)):
        if value is not None:
            parts.append(
                f'<rect class="{css}" x="{left:.1f}" y="{bar_top + offset:.1f}" '
                f'width="{max(_drawn(value) * scale, 1):.1f}" height="8"/>'
            )
    parts.append("</g>")
    drawn = "".join(parts)
    if row.anchor is None:
        return drawn
    return f'<a href="#{h(row.anchor)}">{drawn}</a>'


def timing_chart(rows: Sequence[ChartRow]) -> str:
    """An inline SVG of each prompt's time to first text and to `done`, on one scale.

    Any float draws: times are clamped to 0 to a day, and when every time is
    (next to) 0 the scale is 0 and the bars are flat. The tooltips say the times.
    """
    times = [t for row in rows for t in (row.timings.first_text, row.timings.done) if t is not None]
    if not times:
        return '<p class="muted">No timings: no prompt reached its first text.</p>'
    ticks = _ticks(max(_drawn(t) for t in times))
    scale = _BARS / ticks[-1] if ticks[-1] > 0 else 0.0
    # Wrapped as shown: a control character is drawn as its escape (`\x07`), 4 wide.
    labels = [_wrap(terminal_text(row.label)) for row in rows]
    left = math.ceil(max(_width(line) for lines in labels for line in lines)) + _GAP
    heights = [max(_ROW, _LINE * len(lines) + 8) for lines in labels]
    height = _AXIS + sum(heights) + _AXIS
    width = left + _BARS + _PAD
    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        "<title>Time to first text (light) and whole turn (dark), per prompt</title>"
    ]
    for index, tick in enumerate(ticks):
        x = left + tick * scale
        # The last tick's label ends at its line, so it stays inside the chart.
        anchor = "end" if index and index == len(ticks) - 1 else "middle"
        ends = f'x="{x:.1f}" text-anchor="{anchor}"'  # the ticks above the rows and below
        parts.append(
            f'<text {ends} y="{_AXIS - 8}">{tick:g} s</text>'
            f'<line x1="{x:.1f}" y1="{_AXIS - 4}" x2="{x:.1f}" y2="{height - _AXIS + 4}" '
            'stroke="#e0e0e0"/>'
            f'<text {ends} y="{height - 6}">{tick:g} s</text>'
        )
    top = float(_AXIS)
    for row, lines, row_height in zip(rows, labels, heights, strict=True):
        parts.append(_chart_row(row, lines, top, row_height, left, scale))
        top += row_height
    parts.append("</svg>")
    return "".join(parts)


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
    return f"median {seconds(statistics.median(ordered))}, max {seconds(ordered[-1])}"


def _summary(run: RunResult) -> str:
    items = [
        (len(run.prompts), "prompts"),
        (run.failed, "failed"),
        (run.not_run, "did not run"),
        (run.errors, "errors"),
        (run.warnings, "warnings"),
    ]
    bar = "".join(f"<li><strong>{count}</strong>{h(label)}</li>" for count, label in items)
    timings = [result.observation.timings for result in run.ran]
    first = [t.first_text for t in timings if t is not None and t.first_text is not None]
    whole = [t.done for t in timings if t is not None and t.done is not None]
    bar += f"<li>first text: {h(_spread(first))}</li><li>whole turn: {h(_spread(whole))}</li>"
    return f'<ul class="bar">{bar}</ul>'


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
            ("first byte", seconds(timings.first_byte)),
            ("first text", seconds(timings.first_text)),
            ("done", seconds(timings.done)),
        ]
    if observation.failure:
        rows.append(("failure", observation.failure))
    cells = "".join(f"<dt>{h(name)}</dt><dd>{h(value)}</dd>" for name, value in rows)
    return f'<dl class="meta">{cells}</dl>'


def _finding(finding: Finding) -> str:
    evidence = json.dumps(finding.evidence, ensure_ascii=False, indent=1)
    return (
        f'<li class="{h(finding.severity)}"><strong>{h(finding.rule)}</strong> '
        f"({h(finding.severity)}): {h(finding.message)}<pre>{h(evidence)}</pre></li>"
    )


def _prompt(number: int, result: PromptResult, web_url: str | None) -> str:
    css, label = verdict(result)
    # Open where there is something to see; a passing prompt opens with a click.
    opened = " open" if css in ("fail", "warn") else ""
    parts = [
        f'<details class="prompt {css}" id="prompt-{number}"{opened}><summary>',
        f'<h2>{number}. {h(result.prompt.id)} <span class="verdict">{h(label)}</span></h2>',
        ' <a class="top" href="#matrix">back to the matrix</a>',
        f'</summary><p><span class="muted">You:</span> {h(result.prompt.message)}</p>',
        _meta(result),
    ]
    if result.did_run:
        # Vendor names hidden as every other report hides them (`_privacy`).
        turn = VENDOR_NAME.sub(h(VENDOR), turn_html(result.observation.turn, web_url=web_url))
        parts.append(f'<div class="turn">{turn}</div>')
        shown = [o for o in result.result.outcomes if o.status in ("fail", "warn")]
        if shown:
            names = ", ".join(f"{h(o.rule.id)} ({h(o.status)})" for o in shown)
            parts.append(f'<p class="muted">Rules not passed: {names}</p>')
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
    passed = sum(1 for result in run.prompts if verdict(result)[0] == "ok")
    if passed == len(run.prompts):
        prompts += '<p class="none-failed muted">Every prompt passed.</p>'
    # The "failures only" checkbox: a sibling before what it hides (`report.css`).
    switch = (
        '<input type="checkbox" id="failures-only" class="switch">'
        '<label for="failures-only" class="switch">Failures only</label> '
        f'<span class="muted">(hides the {passed} prompt(s) that passed)</span>'
    )
    line = stop_line(run)
    stopped = f'<p class="stopped">{h(line)}</p>' if line else ""
    return terminal_text(  # what `turn_html` wrote too: no raw control, no lone surrogate
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>silvia qa: {h(name)}</title><style>\n{_style()}</style></head>"
        "<body><header>"
        f"<h1>silvia qa: {h(name)}</h1>"
        f'<p class="muted">against {h(run.target)}; silvia-client {h(__version__)}</p>'
        f"{_summary(run)}{stopped}</header>"
        f"{switch}{rule_matrix(run)}{_chart(run)}"
        f"<main>{prompts}</main></body></html>\n"
    )
