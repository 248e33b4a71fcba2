"""Links and labels: what a UI shows for a citation. `account_href` escapes as the web app
does (`/accounts/${encodeURIComponent(accountId)}`); only http(s) URLs become links, labels
carry no bidi controls, and `provider` never shows.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin

from .._text import strip_bidi_controls
from ..errors import ConfigurationError, SilviaError
from ._targets import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CitationTarget,
    MarketDataTarget,
    PortfolioTarget,
    is_http_url,
)

if TYPE_CHECKING:
    from ._rows import Citation

ACCOUNTS_PATH = "/accounts/"  # [doc] the web app's account page
LIVE_DATA_SOURCE = "silvia://market-data/finnhub"  # [doc] its analysis is labelled "Live data"
WEB_URL_ENV = "SILVIA_WEB_URL"  # the web app's origin when no `web_url` is passed


class InvalidAccountIdError(SilviaError, ValueError):
    """An account id that has no link: it holds a lone surrogate, or it is `.` or `..`."""


def encode_uri_component(value: str) -> str:
    """Escape `value` exactly as JavaScript's `encodeURIComponent` does.

    A surrogate pair given as two code points is one character, as in UTF-16; a
    lone surrogate (a `URIError` in JavaScript) raises `InvalidAccountIdError`.
    """
    if not value.isascii():
        value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    try:
        # encodeURIComponent leaves A-Z a-z 0-9 and - _ . ! ~ * ' ( ) alone; quote()
        # always leaves letters, digits and _.-~, so the rest go in `safe`.
        return quote(value, safe="!*'()")
    except UnicodeEncodeError:
        raise InvalidAccountIdError(
            "an account id holds a lone surrogate, which encodeURIComponent rejects"
        ) from None


def account_href(account_id: str) -> str:
    """`/accounts/` plus the escaped id, as the web app links it.

    Raises `InvalidAccountIdError` for a lone surrogate, and for `.` and `..`.
    """
    if account_id in (".", ".."):  # `/accounts/..` is the site root to a browser
        raise InvalidAccountIdError(
            "an account id of '.' or '..' would be a dot segment, which leaves /accounts/"
        )
    return ACCOUNTS_PATH + encode_uri_component(account_id)


def web_origin(web_url: str | None, base_url: str | None = None) -> str:
    """The web app's origin for account links (None: `SILVIA_WEB_URL`), or "" for relative
    paths; `ConfigurationError` unless an absolute http(s) URL. `base_url`, its deprecated
    alias, warns for the line that called this function's caller."""
    if base_url is not None:
        if web_url is not None:
            raise TypeError("pass web_url= only (base_url= is its deprecated name)")
        warnings.warn(
            "base_url= here is the web app's origin and is deprecated: pass web_url= "
            "(base_url means the API server)",
            DeprecationWarning,
            stacklevel=3,
        )
        web_url = base_url
    name = "web_url"
    if web_url is None:
        web_url, name = os.environ.get(WEB_URL_ENV, ""), WEB_URL_ENV
    if web_url and not is_http_url(web_url):
        raise ConfigurationError(f"{name} must be an absolute http(s) URL")
    return web_url


@dataclass(frozen=True, slots=True)
class CitationLink:
    """A place a citation opens: an http(s) URL or an `/accounts/<id>` path."""

    href: str
    label: str


@dataclass(frozen=True, slots=True)
class ResolvedCitation:
    """What a UI shows for a citation: a label, and zero or more links."""

    label: str
    links: tuple[CitationLink, ...] = ()

    @property
    def href(self) -> str | None:
        """The first link's href, for UIs that show one link per citation."""
        return self.links[0].href if self.links else None


def _label(citation: Citation, target: CitationTarget | None) -> str:
    if isinstance(target, MarketDataTarget) and (ticker := strip_bidi_controls(target.ticker)):
        return ticker
    if isinstance(target, AnalysisTarget):
        return "Live data" if citation.source == LIVE_DATA_SOURCE else "Analysis"
    if isinstance(target, PortfolioTarget) and not citation.title:
        return "Portfolio"
    for text in (citation.title, citation.source):
        text = strip_bidi_controls(text) if text else text
        if text and not text.isspace():
            return text
    return "Source"


def _account_link(ref: AccountRef, label: str, origin: str) -> CitationLink | None:
    try:
        href = account_href(ref.account_id)
    except InvalidAccountIdError:
        return None
    return CitationLink(urljoin(origin, href) if origin else href, label)


def resolve_citation(
    citation: Citation, *, web_url: str | None = None, base_url: str | None = None
) -> ResolvedCitation:
    """The label and links a UI shows for `citation`.

    An `account` gives one link and `accounts` one per account; URL-bearing kinds link to their URL
    when set; with no target, a legacy http(s) `source` is the link. `web_url` (the web app's
    origin; None means `SILVIA_WEB_URL`, "" relative paths) makes account links absolute;
    `base_url=` is its deprecated alias. Never raises for a citation built from wire data: an id
    without a link (a lone surrogate, `.`, `..`) gives no link.
    """
    origin = web_origin(web_url, base_url)
    target = citation.target
    label = _label(citation, target)
    if isinstance(target, AccountTarget):
        link = _account_link(target.ref, label, origin)
        return ResolvedCitation(label, (link,) if link else ())
    if isinstance(target, AccountsTarget):
        count = len(target.accounts)
        links = (
            _account_link(ref, f"{label} ({number} of {count})", origin)
            for number, ref in enumerate(target.accounts, start=1)
        )
        return ResolvedCitation(label, tuple(link for link in links if link is not None))
    url = getattr(target, "url", None) if target is not None else citation.source
    # A target built by hand, or a legacy `source`, may hold any string.
    if is_http_url(url):
        return ResolvedCitation(label, (CitationLink(url, label),))  # type: ignore[arg-type]
    return ResolvedCitation(label)
