"""The HTML report's overview: a rules-by-prompts matrix, at the top of the page.

A row per prompt (its number and id link to its section, so a hundred prompts
stay one column of links), a narrow column per rule (the rule id written
upright, whole, with the rule's description as its tooltip; the header stays
in view while the page scrolls), and in each cell a mark: ✓ pass, ! warn,
✗ fail, – the rule did not apply, ○ not run. A cell that is not a pass has
its finding's message (or the reason) as its tooltip. Each row carries its
prompt's verdict class, so the "failures only" switch hides passing rows.
The rules are the terminal table's (`report.table_rules`), in its order.
"""

from __future__ import annotations

from ._html_text import h, verdict
from ._results import (  # the terminal table's: one reading of a cell
    PromptResult,
    RunResult,
    rule_outcome,
    table_rules,
)
from ._rule import Rule
from .checker import RuleOutcome, Status

__all__ = ["LEGEND", "MARKS", "rule_matrix"]

MARKS: dict[Status, tuple[str, str]] = {
    "pass": ("✓", "pass"),
    "warn": ("!", "warn"),
    "fail": ("✗", "fail"),
    "skip": ("–", "skip"),
    "not_run": ("○", "not-run"),
}
"""Each status's mark and CSS class."""

LEGEND = "✓ pass, ! warn, ✗ fail, – the rule did not apply, ○ not run"


def _tooltip(outcome: RuleOutcome | None) -> str:
    if outcome is None:
        return "no expectations"
    if outcome.findings:
        first = outcome.findings[0].message
        more = len(outcome.findings) - 1
        return first + (f" (and {more} more)" if more else "")
    return outcome.reason or ""


def _cell(outcome: RuleOutcome | None) -> str:
    mark, css = MARKS[outcome.status if outcome is not None else "skip"]
    tip = _tooltip(outcome) if css != "pass" else ""
    title = f' title="{h(tip)}"' if tip else ""
    return f'<td class="m {css}"{title}>{mark}</td>'


def _row(number: int, result: PromptResult, rules: list[Rule]) -> str:
    css, label = verdict(result)
    cells = "".join(_cell(rule_outcome(result, rule)) for rule in rules)
    return (
        f'<tr class="{css}"><th scope="row"><a href="#prompt-{number}" title="{h(label)}">'
        f"{number}. {h(result.prompt.id)}</a></th>{cells}</tr>"
    )


def rule_matrix(run: RunResult) -> str:
    """The matrix as an HTML section: a row per prompt, a column per rule."""
    rules = table_rules(run)
    header = "".join(
        f'<th scope="col" class="rule" title="{h(rule.description)}"><span>{h(rule.id)}</span></th>'
        for rule in rules
    )
    rows = "".join(
        _row(number, result, rules) for number, result in enumerate(run.prompts, start=1)
    )
    return (
        '<section class="matrix" id="matrix"><h2>Rules by prompt</h2>'
        f'<p class="muted">{h(LEGEND)}. A prompt links to its section.</p>'
        '<div class="box"><table><thead><tr><th scope="col" class="prompt-col">prompt</th>'
        f"{header}</tr></thead>"
        f"<tbody>{rows}</tbody></table></div></section>"
    )
