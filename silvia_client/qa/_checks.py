"""Each rule's check, on a `Facts` (the table is `rules.py`, with the readings taken).

Rows that repeat a (source, target) pair are reported once, with every place sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from ..chat import CitationsSummaryEvent, MalformedEvent
from ..citations import (
    PROVIDERS,
    AccountsTarget,
    AccountTarget,
    CitationTarget,
    MarketDataTarget,
    is_account_id,
    is_http_url,
)
from ._privacy import VENDOR_NAME
from ._rule import CitedRow, Facts, Problem, Severity, canonical


def _distinct(rows: Iterable[CitedRow]) -> list[tuple[CitedRow, list[str]]]:
    """Rows grouped by (source, raw target): the first of each, with every place it was sent."""
    groups: dict[tuple[str, str], tuple[CitedRow, list[str]]] = {}
    for row in rows:
        key = (row.source, canonical(row.target_raw))
        if key in groups:
            groups[key][1].append(row.where)
        else:
            groups[key] = (row, [row.where])
    return list(groups.values())


def account_ids(target: CitationTarget | None) -> tuple[str, ...] | None:
    """The account ids of an account target, or None for any other."""
    if isinstance(target, AccountTarget):
        return (target.account_id,)
    if isinstance(target, AccountsTarget):
        return tuple(ref.account_id for ref in target.accounts)
    return None


def describe_target(target: CitationTarget | None) -> str:
    if target is None:
        return "no target"
    if isinstance(target, MarketDataTarget):
        return f"`market_data` ({target.ticker})"
    if isinstance(target, AccountsTarget):
        return f"`accounts` ({len(target.accounts)})"
    url = getattr(target, "url", "absent")
    if url != "absent":
        return f"`{target.kind}` (url {'null' if url is None else url})"
    return f"`{target.kind}`"


def _evidence(row: CitedRow, places: list[str] | None = None) -> dict[str, object]:
    return {"source": row.source, "target": row.target_raw, "where": places or [row.where]}


def _unknown_providers(raw: object) -> int:
    """How many account refs in a raw target carry a provider outside the doc's three (or null)."""
    if not isinstance(raw, dict):
        return 0
    refs = [raw] if raw.get("kind") == "account" else raw.get("accounts")
    count = 0
    for ref in refs if isinstance(refs, list) else ():
        provider = ref.get("provider") if isinstance(ref, dict) else None
        count += provider is not None and not (isinstance(provider, str) and provider in PROVIDERS)
    return count


def check_target_parses(facts: Facts) -> Iterator[Problem]:
    for row, places in _distinct(row for row in facts.all_rows() if row.target_raw is not None):
        if row.target is None:
            yield Problem(
                f"{row.source}: the target does not parse (the client falls back to source "
                "and title)",
                _evidence(row, places),
            )
        elif unknown := _unknown_providers(row.target_raw):
            yield Problem(
                f"{row.source}: {unknown} account ref(s) with a provider that is none of the "
                "doc's values or null (the parser reads it as null)",
                _evidence(row, places),
            )


# The sources of the doc's table, for `target-fits-source`.
ACCOUNT_PREFIX = "silvia://your-account/"
PORTFOLIO = "silvia://your-portfolio"
FINNHUB = "silvia://market-data/finnhub"
ANALYSIS = "silvia://analysis"
SEARCH_WEB = "silvia://search/search_web"
_LIBRARY_PREFIXES = {
    "silvia://tax-authority/": "tax_reference",
    "silvia://credit-card-corpus/": "card_document",
    "silvia://mortgage-code/": "mortgage_reference",
}
_URL_KINDS = ("web", "tax_reference", "card_document", "mortgage_reference")
_URL_KINDS_TEXT = "`web`, `tax_reference`, `card_document` or `mortgage_reference`"


def expected_target(source: str, target: CitationTarget) -> str | None:
    """What the doc's table gives `source`, when `target` does not fit it; None when it does."""
    kind = target.kind
    if source.startswith(ACCOUNT_PREFIX) and len(source) > len(ACCOUNT_PREFIX):
        return None if kind in ("account", "accounts") else "`account` or `accounts` (or none)"
    if source == PORTFOLIO:
        return None if kind == "portfolio" else "`portfolio`"
    ticker = source[len(FINNHUB) + 1 :] if source.startswith(FINNHUB + "/") else ""
    if ticker and "/" not in ticker:
        fits = isinstance(target, MarketDataTarget) and target.ticker == ticker
        return None if fits else f"`market_data` with ticker {ticker}"
    if source in (FINNHUB, ANALYSIS):
        return None if kind == "analysis" else "`analysis`"
    if is_http_url(source):
        fits = kind in _URL_KINDS and getattr(target, "url", None) == source
        return None if fits else f"{_URL_KINDS_TEXT} with url equal to the source"
    for prefix, library_kind in _LIBRARY_PREFIXES.items():
        if source.startswith(prefix) and len(source) > len(prefix):
            fits = kind == library_kind and getattr(target, "url", "") is None
            return None if fits else f"`{library_kind}` with url null"
    if source == SEARCH_WEB:
        return "no target"
    return "no target (the doc's table has no such source)"


def check_target_fits_source(facts: Facts) -> Iterator[Problem]:
    for row, places in _distinct(row for row in facts.all_rows() if row.target is not None):
        assert row.target is not None
        expected = expected_target(row.source, row.target)
        if expected is not None:
            yield Problem(
                f"{row.source}: {describe_target(row.target)} does not fit; "
                f"the doc gives {expected}",
                _evidence(row, places),
            )


def check_account_ids(facts: Facts) -> Iterator[Problem]:
    for row, places in _distinct(row for row in facts.all_rows() if account_ids(row.target)):
        bad = [
            account_id
            for account_id in account_ids(row.target) or ()
            if not is_account_id(account_id)
        ]
        if bad:
            yield Problem(
                f"{row.source}: account id(s) {', '.join(map(repr, bad))} break the doc's id "
                "rule (16 to 128 letters, digits, '-' or '_', not all digits)",
                {**_evidence(row, places), "bad_ids": bad},
            )


def _find_key(value: object, key: str, path: str = "") -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for name, item in value.items():
            here = f"{path}.{name}" if path else str(name)
            if name == key:
                yield here, item
            yield from _find_key(item, key, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _find_key(item, key, f"{path}[{index}]")


def check_message_has_no_targets(facts: Facts) -> Iterator[Problem]:
    for number, value in facts.messages:
        for path, target in _find_key(value, "target"):
            yield Problem(
                f"the raw `message` (event {number}) carries a target at {path}",
                {"event": number, "path": path, "target": target},
            )


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


def check_one_meaning(facts: Facts) -> Iterator[Problem]:
    # The rows in the order the server sent them: the stream, then each source's final
    # row (the summary's last row for a source is its final word).
    final = {row.source: row for row in facts.summary or () if row.parses}
    # Per source: untyped so far (from the start), typed, or untyped after being typed.
    typed: dict[str, CitedRow] = {}  # a source's last typed row
    untyped_after: dict[str, CitedRow] = {}  # the row that untyped a typed source
    untyped_first: dict[str, CitedRow] = {}  # the first row of a source that came untyped
    for row in [*facts.streamed, *final.values()]:
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


def _by_source(rows: Iterable[CitedRow]) -> dict[str, Counter[tuple[tuple[str, str, str], str]]]:
    out: dict[str, Counter[tuple[tuple[str, str, str], str]]] = {}
    for row in rows:
        out.setdefault(row.source, Counter())[(row.text_key, row.target_key)] += 1
    return out


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
                        "live": [row.target_raw for row in live_rows if row.source == source],
                        "reloaded": [r.target_raw for r in stored_rows if r.source == source],
                    },
                )


def check_no_vendor_names(facts: Facts) -> Iterator[Problem]:
    asked = (
        "; the prompt names a vendor too" if VENDOR_NAME.search(facts.observation.prompt) else ""
    )
    offsets = [match.start() for match in VENDOR_NAME.finditer(facts.text)]
    if offsets:
        yield Problem(
            f"a vendor name appears in the answer text ({len(offsets)} time(s)){asked}",
            {"field": "text", "offsets": offsets},
        )
    places: dict[tuple[str, str], list[str]] = {}
    for row in [*facts.streamed, *(facts.summary or ())]:
        for name in ("title", "cited_text"):
            value = row.raw.get(name)
            if isinstance(value, str) and VENDOR_NAME.search(value):
                places.setdefault((row.source, name), []).append(row.where)
    for (source, name), where in places.items():
        yield Problem(
            f"{source}: a vendor name appears in citations' `{name}`{asked}",
            {"field": name, "source": source, "where": where},
        )


def check_stream_complete(facts: Facts) -> Iterator[Problem]:
    observation = facts.observation
    if not observation.complete:
        yield Problem(
            observation.failure or "`done` never arrived",
            {"events": len(observation.events), "request_id": observation.request_id},
        )


def check_event_order(facts: Facts) -> Iterator[Problem]:
    names = facts.observation.wire.events
    sent = [event.name for event in facts.observation.events]
    if sent[0] != names.session:
        at = sent.index(names.session) + 1 if names.session in sent else None
        yield Problem(
            f"the first event is `{sent[0]}`, not `{names.session}`",
            {"first": sent[0], "session_event": at},
        )
    for name in (names.session, names.citations_summary, names.message):
        if sent.count(name) > 1:
            yield Problem(f"{sent.count(name)} `{name}` events; a turn has one", {"event": name})


def check_events_well_formed(facts: Facts) -> Iterator[Problem]:
    observation = facts.observation
    for number, sent in enumerate(observation.events, start=1):
        event = sent.event
        if isinstance(event, MalformedEvent):
            yield Problem(
                f"event {number} (`{sent.name}`) is not its documented shape: {event.reason}",
                {"event": number, "name": sent.name, "reason": event.reason},
            )
        elif isinstance(event, CitationsSummaryEvent):
            for error in event.errors:
                yield Problem(
                    f"event {number} (`{sent.name}`): row {error.index} is not a citation: "
                    f"{error.reason}",
                    {"event": number, "row": error.index, "reason": error.reason},
                )
    if not observation.raw:
        for error in observation.turn.citation_errors:
            yield Problem(
                f"summary row {error.index} is not a citation: {error.reason}",
                {"row": error.index, "reason": error.reason},
            )
