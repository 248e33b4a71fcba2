"""The HTML report's timing chart: each prompt's time to first text and to `done`.

One inline SVG, a row per prompt: its label on the left, two bars on one
scale on the right, round ticks below. A label is never cut: it is written
whole, starting at the chart's left edge, on as many lines as it needs
(`_wrap` breaks it after `-`, `_`, `.`, `/` or a space, or anywhere in a run
too long for a line), and the label column is as wide as its widest line. The
widths are estimated from each character's class (`_em`), on the wide side,
so a line fits its column in any common sans-serif font; the browser test
checks that with the rendered boxes. The SVG scales down to fit a narrow
page, so the page never scrolls sideways. Each row links to its prompt's
section, and its tooltip says the whole label and the times.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from .._text import terminal_text
from ..chat import Timings
from ._html_text import DAY, h, seconds

__all__ = ["ChartRow", "timing_chart"]

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


def _row(
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
        parts.append(_row(row, lines, top, row_height, left, scale))
        top += row_height
    parts.append("</svg>")
    return "".join(parts)
