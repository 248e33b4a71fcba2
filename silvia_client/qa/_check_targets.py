"""Each target as sent, on its own: it parses, fits its source, and is only where targets go.

The rules `target-parses`, `target-fits-source`, `account-id-rule` and
`message-has-no-targets`. Each target is judged on its own, against the doc:
that it parses, that its kind fits its source by the doc's table
(`expected_target`), that its account ids follow the doc's id rule; and no
target rides in the raw `message` event. Rows that repeat a (source, target)
pair are reported once, with every place they were sent. Whether a source's
targets agree with one another is `_check_registry.py`'s. The readings taken
where the doc leaves room are in `rules.py`'s docstring.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..citations import (
    PROVIDERS,
    AccountsTarget,
    AccountTarget,
    CitationTarget,
    MarketDataTarget,
    is_account_id,
    is_http_url,
)
from ._facts import CitedRow, Facts, canonical
from ._rule import Problem

__all__ = [
    "account_ids",
    "check_account_ids",
    "check_message_has_no_targets",
    "check_target_fits_source",
    "check_target_parses",
    "describe_target",
    "expected_target",
]


# -- helpers ---------------------------------------------------------------------------


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


# -- target-parses ---------------------------------------------------------------------


def _unknown_providers(raw: object) -> int:
    """How many account refs in a raw target carry a provider outside the doc's three (or null)."""
    if not isinstance(raw, dict):
        return 0
    refs = [raw] if raw.get("kind") == "account" else raw.get("accounts")
    count = 0
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, dict) and "provider" in ref:
            provider = ref["provider"]
            if provider is not None and not (isinstance(provider, str) and provider in PROVIDERS):
                count += 1
    return count


def check_target_parses(facts: Facts) -> Iterator[Problem]:
    for row, places in _distinct(row for row in facts.all_rows() if row.target_sent):
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


# -- target-fits-source ----------------------------------------------------------------

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


# -- account-id-rule -------------------------------------------------------------------


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


# -- message-has-no-targets ------------------------------------------------------------


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
