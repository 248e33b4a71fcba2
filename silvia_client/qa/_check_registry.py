"""The server's registry, checked on what it sent: `one-meaning-per-source`.

A source keeps one meaning for the turn: the same target again, or accounts
pooled, is fine; typed, then untyped is fine; untyped after being typed, then
typed again, or typed as one thing and then another not by pooling, is not.
Untyped from the start, then typed, is what a turn resumed from an old
checkpoint does (a warning, unless the prompt says `no_old_checkpoint`). The
reading in full is in `rules.py`'s docstring; each target on its own is
`_check_targets.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..citations import CitationTarget
from ._check_targets import account_ids, describe_target
from ._facts import CitedRow, Facts
from ._rule import Problem, Severity

__all__ = ["check_one_meaning"]

_OLD_CHECKPOINT = (
    "untyped, then typed: legitimate when the turn resumed from a checkpoint written before "
    "targets existed and then wrote the source afresh"
)


def _retyped(old: CitationTarget, new: CitationTarget) -> str | None:
    """Why a typed source typed again as `new` breaks one meaning per source, or None."""
    if old == new:
        return None
    old_ids, new_ids = account_ids(old), account_ids(new)
    if old_ids is not None and new_ids is not None:
        dropped = [account_id for account_id in old_ids if account_id not in new_ids]
        if not dropped:
            return None  # pooled: an account source's accounts may only grow
        return f"its accounts shrank ({len(dropped)} dropped): accounts may only grow"
    return (
        f"its target changed from {describe_target(old)} to {describe_target(new)}, not by pooling"
    )


def _walk(facts: Facts) -> list[CitedRow]:
    """The rows in the order the server sent them: the stream, then each source's final row."""
    final: dict[str, CitedRow] = {}
    for row in facts.summary or ():
        if row.parses:
            final[row.source] = row  # the summary's last row for a source is its final word
    return [*facts.streamed, *final.values()]


def check_one_meaning(facts: Facts) -> Iterator[Problem]:
    # Per source: untyped so far (from the start), typed, or untyped after being typed.
    typed: dict[str, CitedRow] = {}  # a source's last typed row
    untyped_after: dict[str, CitedRow] = {}  # the row that untyped a typed source
    untyped_first: dict[str, CitedRow] = {}  # the first row of a source that came untyped
    for row in _walk(facts):
        if not row.parses:
            continue  # `target-parses` reports it; it says nothing about the meaning
        source = row.source
        if row.target is None:
            if source in typed:
                untyped_after.setdefault(source, row)
            else:
                untyped_first.setdefault(source, row)
            continue
        before = untyped_after.pop(source, None)
        reason: str | None = None
        severity: Severity | None = None
        if before is not None:
            reason = "typed, untyped, then typed again: once untyped, a source stays untyped"
        elif source in typed:
            before = typed[source]
            assert before.target is not None
            reason = _retyped(before.target, row.target)
        elif source in untyped_first:
            before = untyped_first[source]
            reason = _OLD_CHECKPOINT
            if not facts.no_old_checkpoint:
                severity = "warning"
            else:
                reason += ", which the prompt's expectations rule out (`no_old_checkpoint`)"
        typed[source] = row
        if reason is not None and before is not None:
            yield Problem(
                f"{source}: {reason} ({before.where} -> {row.where})",
                {
                    "source": source,
                    "before": {"where": before.where, "target": before.target_raw},
                    "after": {"where": row.where, "target": row.target_raw},
                },
                severity,
            )
