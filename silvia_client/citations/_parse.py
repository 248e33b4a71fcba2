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


def _account_ref(entry: object) -> AccountRef | None:
    """An account ref (`accountId`, `provider`), or None when its id is missing or not text.

    An unknown or missing provider becomes None: the account itself is still good.
    """
    if not isinstance(entry, dict):
        return None
    account_id, provider = entry.get("accountId"), entry.get("provider")
    if type(account_id) is not str or not account_id:
        return None
    known = type(provider) is str and provider in PROVIDERS
    return AccountRef(account_id, provider if known else None)


def _read(value: dict[object, object]) -> CitationTarget | None:
    kind, url = value.get("kind"), value.get("url")
    if type(kind) is not str:  # a str subclass could compare equal to a kind
        return None
    match kind:
        case "web":
            return WebTarget(url) if is_http_url(url) else None  # type: ignore[arg-type]
        case "tax_reference" | "card_document" | "mortgage_reference":
            # `url` is null, missing (read as null), or an absolute http(s) URL.
            if url is not None and not is_http_url(url):
                return None
            return _OPTIONAL_URL[kind](url)  # type: ignore[arg-type]  # a str: checked above
        case "market_data":
            ticker = value.get("ticker")
            return MarketDataTarget(ticker) if type(ticker) is str and ticker else None
        case "analysis":
            return _ANALYSIS
        case "portfolio":
            return _PORTFOLIO
        case "account":
            ref = _account_ref(value)
            return None if ref is None else AccountTarget(ref.account_id, ref.provider)
        case "accounts":
            entries = value.get("accounts")
            if type(entries) is not list or not entries:
                return None
            refs = [_account_ref(entry) for entry in entries]
            return None if None in refs else AccountsTarget(tuple(refs))  # type: ignore[arg-type]
    return None


_ANALYSIS = AnalysisTarget()
_PORTFOLIO = PortfolioTarget()
_OPTIONAL_URL: dict[str, Callable[[str | None], CitationTarget]] = {
    "tax_reference": TaxReferenceTarget,
    "card_document": CardDocumentTarget,
    "mortgage_reference": MortgageReferenceTarget,
}


def parse_citation_target(value: object) -> CitationTarget | None:
    """Read a wire target, or give None for anything malformed or unknown. Never raises."""
    try:
        return _read(value) if isinstance(value, dict) else None
    except Exception:
        # Only a hostile dict subclass (a raising `get` or `__eq__`) gets here;
        # the contract is "None, never an exception" for any input.
        return None
