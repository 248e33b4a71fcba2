"""The summary and the reloaded session against the stream: `summary-agrees`, `reload-agrees`.

`summary-agrees` asks that the summary cite the streamed sources, one target
each; `reload-agrees` that every row of the reloaded message be a row as it
was sent live (the summary's, and each streamed row with the target it
streamed with). Rows are compared as sent, by source, title, quoted text and
target. The readings taken where the doc leaves room are in `rules.py`'s
docstring.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from ._facts import CitedRow, Facts
from ._rule import Problem

__all__ = ["check_reload_agrees", "check_summary_agrees"]


# -- summary-agrees --------------------------------------------------------------------


def check_summary_agrees(facts: Facts) -> Iterator[Problem]:
    if facts.summary is None:
        if facts.streamed:
            yield Problem(
                f"no `citations_summary` arrived, though {len(facts.streamed)} citation(s) "
                "streamed",
                {"streamed": len(facts.streamed)},
            )
        return
    streamed = dict.fromkeys(row.source for row in facts.streamed)
    summarised: dict[str, list[CitedRow]] = {}
    for row in facts.summary:
        summarised.setdefault(row.source, []).append(row)
    for source in streamed:
        if source not in summarised:
            yield Problem(
                f"{source}: streamed, but missing from the summary",
                {
                    "source": source,
                    "where": [r.where for r in facts.streamed if r.source == source],
                },
            )
    for source, rows in summarised.items():
        if source not in streamed:
            yield Problem(
                f"{source}: in the summary, but never streamed",
                {"source": source, "where": [row.where for row in rows]},
            )
        if len({row.target_key for row in rows}) > 1:
            yield Problem(
                f"{source}: the summary gives it {len({r.target_key for r in rows})} different "
                "targets; the summary is final, one target per source",
                {
                    "source": source,
                    "targets": [{"where": row.where, "target": row.target_raw} for row in rows],
                },
            )


# -- reload-agrees ---------------------------------------------------------------------


def _by_source(rows: Iterable[CitedRow]) -> dict[str, Counter[tuple[tuple[str, str, str], str]]]:
    out: dict[str, Counter[tuple[tuple[str, str, str], str]]] = {}
    for row in rows:
        out.setdefault(row.source, Counter())[(row.text_key, row.target_key)] += 1
    return out


def _targets(rows: Iterable[CitedRow], source: str) -> list[object]:
    return [row.target_raw for row in rows if row.source == source]


def _differences(
    live: Counter[tuple[tuple[str, str, str], str]],
    stored: Counter[tuple[tuple[str, str, str], str]],
) -> str:
    """How a source's stored rows differ from its live ones, counted, in words."""
    missing, extra = live - stored, stored - live
    # A row missing and a row never sent that cite the same text: one row, another target.
    same_text = Counter(text for text, _ in missing.elements()) & Counter(
        text for text, _ in extra.elements()
    )
    retargeted = same_text.total()
    parts = []
    if missing.total() - retargeted:
        parts.append(f"{missing.total() - retargeted} live row(s) missing")
    if extra.total() - retargeted:
        parts.append(f"{extra.total() - retargeted} row(s) never sent live")
    if retargeted:
        parts.append(f"{retargeted} row(s) with another target than the one sent live")
    return "; ".join(parts)


def check_reload_agrees(facts: Facts) -> Iterator[Problem]:
    reloaded = facts.reloaded
    assert reloaded is not None
    if reloaded.error is not None:
        yield Problem(reloaded.error)
        return
    # Every reloaded row is a row as it was sent: the summary's, and each streamed
    # row with the target it streamed with.
    pairs = [("citations", "the live summary", facts.summary, reloaded.citations)]
    pairs.append(("inline citations", "the stream", facts.streamed, reloaded.inline_citations))
    for name, what, live_rows, stored_rows in pairs:
        if live_rows is None:
            continue  # no summary arrived: `summary-agrees` says so
        live, stored = _by_source(live_rows), _by_source(stored_rows)
        for source in dict.fromkeys([*live, *stored]):
            if live.get(source) != stored.get(source):
                how = _differences(live.get(source, Counter()), stored.get(source, Counter()))
                yield Problem(
                    f"{source}: the reloaded message's {name} differ from {what} ({how})",
                    {
                        "source": source,
                        "live": _targets(live_rows, source),
                        "reloaded": _targets(stored_rows, source),
                    },
                )
