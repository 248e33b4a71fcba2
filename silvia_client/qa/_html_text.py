"""What every part of the HTML report shares: escaping, a prompt's verdict, a duration.

The page (`_html.py`), its rules-by-prompt matrix (`_html_matrix.py`) and its
timing chart (`_html_chart.py`) write every string from the server or the
script through `h`, and mark each prompt with the CSS class `verdict` gives
(`ok`, `warn`, `fail`, `not-run`): the "failures only" switch hides by that class.
"""

from __future__ import annotations

import html

from .._text import terminal_text
from ._results import PromptResult, seconds_text

__all__ = ["DAY", "h", "seconds", "verdict"]

DAY = 86_400.0  # s: a longer time (or an infinite one) is drawn as a day


def h(text: object) -> str:
    """Text from the server or the script, as HTML text or an attribute value."""
    return html.escape(terminal_text(str(text)), quote=True)


def verdict(result: PromptResult) -> tuple[str, str]:
    """(CSS class, label) of a prompt's verdict."""
    if not result.did_run:
        return "not-run", "not run"
    checked = result.result
    if checked.errors:
        return "fail", "FAIL"
    return ("warn", "warn") if checked.warnings else ("ok", "ok")


def seconds(value: float | None) -> str:
    """`70 ms`, `1.25 s`, or `not reached`; an odd float (NaN, inf, past a day) as it is."""
    if value is not None and not 0 <= value <= DAY:
        return f"{value:g} s"  # NaN, infinite, negative or past a day: as it is, and short
    return seconds_text(value, "not reached")
