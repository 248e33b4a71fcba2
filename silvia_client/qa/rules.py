"""The rule table: what a conforming server sends, as checks on one observed turn.

The server team's rules (`chat-citation-targets.md`; the wire contract's "The
server's rules" and "Privacy"), plus two about the stream. Each check is in
`_checks.py`; the checker turns what it finds into redacted `Finding`s.

Where the doc leaves room, the reading taken here:

* A source may always arrive with no target (an old checkpoint, or a disagreement
  the server untyped): `target-fits-source` judges only the targets sent.
* A humanized library URL (eCFR XML, US Code ZIP) is the block's source, so the
  target's `url` still equals the source.
* `one-meaning-per-source` checks the server's registry on what it sent: each
  source's rows in stream order, then the summary's last row for it (the final
  word, as `target_for` reads it). The same target again, accounts pooled (by
  account id), or typed then untyped is fine; untyped after typed then typed again,
  or typed as another thing not by pooling, is an error. Untyped from the start,
  then typed (an old checkpoint written afresh) is a warning, or an error with
  `"no_old_checkpoint": true`.
* `summary-agrees` asks for the same *sources* as the stream and one target each,
  not every streamed row (the doc does not say the summary keeps duplicates).
* `reload-agrees`: every reloaded row equals a row as sent (by source, title,
  quoted text and parsed target), an inline row with the target it streamed with
  ("raw from the row"). An incomplete turn is not reloaded.
* `no-vendor-names` reads the answer text, titles and quoted text (a UI shows the
  quote), as a warning: a user may ask about a vendor by name. A finding names the
  field and place, never the text around the name.
"""

from __future__ import annotations

from collections.abc import Mapping

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
from ._rule import Facts, Finding, Problem, Rule, Severity

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


def _needs_events(facts: Facts) -> str | None:
    return None if facts.observation.events else "no events arrived"


def _needs_raw(facts: Facts) -> str | None:
    if not facts.observation.raw:
        return "needs the raw events, and this turn was rebuilt from a Turn"
    return _needs_events(facts)


def _needs_summary(facts: Facts) -> str | None:
    if facts.summary is None and not facts.observation.done:
        return "the stream stopped before the summary"
    return _needs_events(facts)


def _needs_reload(facts: Facts) -> str | None:
    if facts.reloaded is not None:
        return None
    if not facts.observation.complete:
        return "the turn did not complete, so it was not reloaded"
    return "the session was not reloaded"


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


EXPECTATIONS = Rule(
    "expectations",
    "error",
    "the prompt's own expectations, from the QA script, hold",
    lambda facts: (),  # the checker gives its problems
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
    lambda facts: (),  # the checker gives its problems
    _needs_timings,
)
"""Not a server rule: the row for the script's time budgets (its severity is the script's)."""
