"""`parse_citation_target`: the one door through which a wire target enters the SDK.

The rules are the wire contract's ("CitationTarget and how a client reads it"):
an unknown kind or a malformed value gives None, so the caller falls back to
the citation's `source` and `title`; an unknown `provider` becomes None while
the account is kept; one bad entry voids an `accounts` target, because
"accounts" means *all* of the listed accounts and a partial list would misstate
that. Extra fields are ignored, for forward compatibility.

Hand-written over plain dicts on purpose: it is on the hot path of every
streamed citation, and it must never raise, whatever it is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._targets import (
    PROVIDERS,
    AccountProvider,
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
)

__all__ = ["is_http_url", "parse_citation_target"]

# scheme://[userinfo@]host[:port][/path][?query][#fragment], with no ASCII space or
# control character anywhere. One compiled pattern: URLs are most of what targets carry.
_HTTP_URL = re.compile(
    r"(?i:https?)://"
    r"(?:[^\x00-\x20\x7f/?#]*@)?"  # userinfo
    r"[^\x00-\x20\x7f/?#@:][^\x00-\x20\x7f/?#@]*"  # a host, then perhaps a port
    r"(?:[/?#][^\x00-\x20\x7f]*)?"  # path, query, fragment
)


def is_http_url(value: object) -> bool:
    """True for an absolute http or https URL with a host, free of whitespace and controls."""
    if type(value) is not str or _HTTP_URL.fullmatch(value) is None:
        return False
    return value.isascii() or _is_clean_text(value)


def _is_clean_text(value: str) -> bool:
    # Unicode whitespace and controls end a URL in a browser as ASCII ones do, and a
    # lone surrogate cannot be sent at all; none of them counts as printable.
    return all(char.isprintable() and not char.isspace() for char in value)


def _provider(value: object) -> AccountProvider | None:
    # Unknown or missing providers become None: the account itself is still good.
    if type(value) is str and value in PROVIDERS:
        return value  # type: ignore[return-value]
    return None


def _account_id(value: object) -> str | None:
    if type(value) is str and value:
        return value
    return None


def _parse_web(data: dict[object, object]) -> CitationTarget | None:
    url = data.get("url")
    return WebTarget(url) if is_http_url(url) else None  # type: ignore[arg-type]


def _optional_url(data: dict[object, object]) -> tuple[bool, str | None]:
    url = data.get("url")
    if url is None:
        return True, None
    if is_http_url(url):
        return True, url  # type: ignore[return-value]
    return False, None


def _parse_tax_reference(data: dict[object, object]) -> CitationTarget | None:
    ok, url = _optional_url(data)
    return TaxReferenceTarget(url) if ok else None


def _parse_card_document(data: dict[object, object]) -> CitationTarget | None:
    ok, url = _optional_url(data)
    return CardDocumentTarget(url) if ok else None


def _parse_mortgage_reference(data: dict[object, object]) -> CitationTarget | None:
    ok, url = _optional_url(data)
    return MortgageReferenceTarget(url) if ok else None


def _parse_market_data(data: dict[object, object]) -> CitationTarget | None:
    ticker = data.get("ticker")
    if type(ticker) is str and ticker:
        return MarketDataTarget(ticker)
    return None


def _parse_analysis(data: dict[object, object]) -> CitationTarget | None:
    return _ANALYSIS


def _parse_portfolio(data: dict[object, object]) -> CitationTarget | None:
    return _PORTFOLIO


def _parse_account(data: dict[object, object]) -> CitationTarget | None:
    account_id = _account_id(data.get("accountId"))
    if account_id is None:
        return None
    return AccountTarget(account_id, _provider(data.get("provider")))


def _parse_accounts(data: dict[object, object]) -> CitationTarget | None:
    entries = data.get("accounts")
    if type(entries) is not list or not entries:
        return None
    refs: list[AccountRef] = []
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        account_id = _account_id(entry.get("accountId"))
        if account_id is None:
            return None
        refs.append(AccountRef(account_id, _provider(entry.get("provider"))))
    return AccountsTarget(tuple(refs))


_ANALYSIS = AnalysisTarget()
_PORTFOLIO = PortfolioTarget()

_PARSERS: dict[str, Callable[[dict[object, object]], CitationTarget | None]] = {
    "web": _parse_web,
    "tax_reference": _parse_tax_reference,
    "card_document": _parse_card_document,
    "mortgage_reference": _parse_mortgage_reference,
    "market_data": _parse_market_data,
    "analysis": _parse_analysis,
    "account": _parse_account,
    "accounts": _parse_accounts,
    "portfolio": _parse_portfolio,
}


def parse_citation_target(value: object) -> CitationTarget | None:
    """Read a wire target, or give None for anything malformed or unknown. Never raises."""
    try:
        if not isinstance(value, dict):
            return None
        kind = value.get("kind")
        if type(kind) is not str:
            return None
        parse = _PARSERS.get(kind)
        return parse(value) if parse is not None else None
    except Exception:
        # Only a hostile dict subclass (a raising `get` or `__eq__`) gets here;
        # the contract is "None, never an exception" for any input.
        return None
