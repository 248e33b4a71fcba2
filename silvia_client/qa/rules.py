"""The rule table: what a conforming server sends, as checks on one observed turn.

The rules are the server team's own (`chat-citation-targets.md`, restated in
the wire contract's "The server's rules" and "Privacy"), plus two about the
stream itself. Each check (`_checks.py`) reads a `Facts` and yields `Problem`s,
which the checker turns into `Finding`s (redacted there, in one place).

Where the doc leaves room, the reading taken here:

* A source may always arrive with no target: a turn resumed from a checkpoint
  written before targets existed streams its sources untyped, and one meaning
  per source untypes a source on any disagreement. So `target-fits-source`
  judges only the targets that were sent, and never asks for one.
* A library URL may be humanized (eCFR XML, US Code ZIP): the block is then
  sourced to the humanized URL, so the target's `url` still equals the source.
* `one-meaning-per-source` checks the server's registry on what the server
  sent (the registry is the server's; the SDK never re-applies it to the
  rows). It walks each source's rows in stream order, then the summary's
  target for the source (its last row, the final word, as `target_for` reads
  it): the same target again, or accounts pooled (an `account` growing into
  `accounts`, by account id), is fine; typed, then untyped is fine (the server
  untyped it on a disagreement); untyped after being typed, then typed again,
  is an error; typed as one thing, then as another not by pooling, is an
  error. Untyped from the start, then typed, is what a turn resumed from a
  checkpoint written before targets existed does when it writes the source
  afresh: a warning saying so, or an error when the prompt's expectations say
  `"no_old_checkpoint": true`.
* `summary-agrees` asks that the summary and the stream cite the same
  *sources*, and that the summary gives each source one target, comparing the
  rows as sent. It does not ask that every streamed row appear in the summary
  row for row: the doc does not say the summary keeps duplicates or every
  quoted passage. Whether the summary's target follows from the stream is one
  meaning per source's, and is reported there, once.
* `reload-agrees` compares the reloaded message's `citations` with the live
  summary and its `inline_citations` with the streamed rows, by source, title,
  quoted text and (parsed) target: every reloaded row must equal a row as it
  was sent, each inline row with the target it streamed with ("raw from the
  row"). An incomplete turn is not reloaded: it may rightly not be stored.
* `no-vendor-names` looks at the answer text, and at every citation's title
  and quoted text (`cited_text`): a UI shows the quote as the citation's
  excerpt, so a vendor name there reaches the user just the same. It is a
  warning: a user may ask about a vendor by name, and a web page may name one.
  Findings name the field and the place, never the text around the name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ._checks import (
    check_account_ids,
    check_event_order,
    check_events_well_formed,
    check_message_has_no_targets,
    check_no_vendor_names,
    check_one_meaning,
    check_reload_agrees,
    check_stream_complete,
    check_summary_agrees,
    check_target_fits_source,
    check_target_parses,
    expected_target,
)
from ._facts import Facts
from ._rule import Finding, Problem, Rule, Severity

__all__ = [
    "EXPECTATIONS",
    "RULES",
    "RULES_BY_ID",
    "TIMING",
    "Finding",
    "Problem",
    "Rule",
    "Severity",
    "expected_target",
]


# -- when a rule applies ----------------------------------------------------------


def _needs_events(facts: Facts) -> str | None:
    return None if facts.observation.events else "no events arrived"


def _needs_raw(facts: Facts) -> str | None:
    if not facts.observation.raw:
        return "needs the raw events, and this turn was rebuilt from a Turn"
    return _needs_events(facts)


def _needs_summary(facts: Facts) -> str | None:
    if facts.summary is None and not facts.done:
        return "the stream stopped before the summary"
    return _needs_events(facts)


def _needs_reload(facts: Facts) -> str | None:
    if facts.reloaded is not None:
        return None
    if not facts.observation.complete:
        return "the turn did not complete, so it was not reloaded"
    return "the session was not reloaded"


# -- the table --------------------------------------------------------------------------


RULES: tuple[Rule, ...] = (
    Rule(
        "target-parses",
        "error",
        "every target the server sent parses, with a documented provider or null",
        check_target_parses,
        _needs_raw,
    ),
    Rule(
        "target-fits-source",
        "error",
        "each target's kind fits its source, per the doc's table",
        check_target_fits_source,
        _needs_events,
    ),
    Rule(
        "account-id-rule",
        "error",
        "account ids follow the doc's id rule",
        check_account_ids,
        _needs_events,
    ),
    Rule(
        "one-meaning-per-source",
        "error",
        "a source keeps one meaning for the turn: accounts only grow, untyped stays untyped",
        check_one_meaning,
        _needs_raw,
    ),
    Rule(
        "summary-agrees",
        "error",
        "the summary cites the streamed sources, one target each",
        check_summary_agrees,
        _needs_summary,
    ),
    Rule(
        "reload-agrees",
        "error",
        "the reloaded session holds the live turn's citations and targets",
        check_reload_agrees,
        _needs_reload,
    ),
    Rule(
        "message-has-no-targets",
        "error",
        "the raw `message` event carries no targets",
        check_message_has_no_targets,
        _needs_events,
    ),
    Rule(
        "no-vendor-names",
        "warning",
        "no vendor name in the answer text, titles or quoted text",
        check_no_vendor_names,
        _needs_events,
    ),
    Rule(
        "stream-complete",
        "error",
        "the stream was complete: `done` arrived",
        check_stream_complete,
    ),
    Rule(
        "event-order",
        "error",
        "`session` comes first, and a turn has one session, summary and message",
        check_event_order,
        _needs_raw,
    ),
    Rule(
        "events-well-formed",
        "error",
        "every known event's data has its documented shape",
        check_events_well_formed,
        _needs_events,
    ),
)

RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in RULES}


def _no_check(facts: Facts) -> Iterator[Problem]:
    return iter(())


EXPECTATIONS = Rule(
    "expectations",
    "error",
    "the prompt's own expectations, from the QA script, hold",
    _no_check,
)
"""Not a server rule: the row of the table for a script's per-prompt expectations."""


def _needs_timings(facts: Facts) -> str | None:
    if facts.observation.timings is None:
        return "no timings: the turn was not observed as it streamed"
    return None


TIMING = Rule(
    "timing",
    "warning",
    "the first text and the whole turn came within the script's budgets "
    "(max_first_text_s, max_turn_s; a warning unless the script says error)",
    _no_check,
    _needs_timings,
)
"""Not a server rule: the row for the script's time budgets (its severity is the script's)."""
