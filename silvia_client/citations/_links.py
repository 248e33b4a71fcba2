"""Links and labels: what a UI shows for a citation.

`account_href` escapes exactly as JavaScript's `encodeURIComponent`, because the
web app opens `/accounts/${encodeURIComponent(accountId)}` and our links must
be the same links. `resolve_citation` turns a citation into a label and its
links; it never shows `provider`, and only http(s) URLs ever become links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin

from ..errors import ConfigurationError, SilviaError
from ._parse import is_http_url
from ._targets import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CitationTarget,
    MarketDataTarget,
    PortfolioTarget,
)

if TYPE_CHECKING:
    from ._rows import Citation

__all__ = [
    "ACCOUNTS_PATH",
    "CitationLink",
    "InvalidAccountIdError",
    "ResolvedCitation",
    "account_href",
    "encode_uri_component",
    "resolve_citation",
]

ACCOUNTS_PATH = "/accounts/"  # [doc] the web app's account page
LIVE_DATA_SOURCE = "silvia://market-data/finnhub"  # [doc] its analysis is labelled "Live data"

# encodeURIComponent leaves A-Z a-z 0-9 and - _ . ! ~ * ' ( ) alone; quote()
# always leaves letters, digits and _.-~, so the rest go in `safe`.
_UNRESERVED_EXTRA = "!*'()"


class InvalidAccountIdError(SilviaError, ValueError):
    """An account id that cannot be escaped (it holds a lone surrogate), so it has no link."""


def encode_uri_component(value: str) -> str:
    """Escape `value` exactly as JavaScript's `encodeURIComponent` does.

    JavaScript strings are UTF-16: a surrogate pair is one character, and a
    lone surrogate throws `URIError`. Here the pair is joined first, and a lone
    surrogate raises `InvalidAccountIdError`.
    """
    if not value.isascii():
        # Python keeps a pair given as two code points apart; JavaScript would
        # read them as one character, so join them the way UTF-16 does.
        value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    try:
        return quote(value, safe=_UNRESERVED_EXTRA)
    except UnicodeEncodeError:
        raise InvalidAccountIdError(
            "an account id holds a lone surrogate, which encodeURIComponent rejects"
        ) from None


def account_href(account_id: str) -> str:
    """The web app's page for an account: `/accounts/` plus the escaped id."""
    return ACCOUNTS_PATH + encode_uri_component(account_id)


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


def _fallback_label(citation: Citation) -> str:
    for text in (citation.title, citation.source):
        if text and not text.isspace():
            return text
    return "Source"


def _label(citation: Citation, target: CitationTarget | None) -> str:
    if isinstance(target, MarketDataTarget):
        return target.ticker
    if isinstance(target, AnalysisTarget):
        return "Live data" if citation.source == LIVE_DATA_SOURCE else "Analysis"
    if isinstance(target, PortfolioTarget) and not citation.title:
        return "Portfolio"
    return _fallback_label(citation)


def _account_link(ref: AccountRef, label: str, base_url: str | None) -> CitationLink | None:
    try:
        href = account_href(ref.account_id)
    except InvalidAccountIdError:
        return None
    return CitationLink(urljoin(base_url, href) if base_url else href, label)


def _links(
    citation: Citation, target: CitationTarget | None, label: str, base_url: str | None
) -> tuple[CitationLink, ...]:
    if isinstance(target, AccountTarget):
        link = _account_link(target.ref, label, base_url)
        return (link,) if link else ()
    if isinstance(target, AccountsTarget):
        count = len(target.accounts)
        links = (
            _account_link(ref, f"{label} ({number} of {count})", base_url)
            for number, ref in enumerate(target.accounts, start=1)
        )
        return tuple(link for link in links if link is not None)
    url = getattr(target, "url", None) if target is not None else citation.source
    # Defence in depth: the parser only lets http(s) URLs into targets, but a
    # target can also be built by hand, and a legacy `source` is any string.
    if is_http_url(url):
        return (CitationLink(url, label),)  # type: ignore[arg-type]
    return ()


def resolve_citation(citation: Citation, *, base_url: str | None = None) -> ResolvedCitation:
    """The label and links a UI shows for `citation`.

    An `account` gives one link and `accounts` one per account; URL-bearing kinds
    link to their URL when set; with no target, a legacy http(s) `source` is the
    link. `base_url` (the web app's origin) makes account links absolute. Never
    raises for a citation built from wire data: an id that cannot be escaped
    simply gives no link.
    """
    if base_url is not None and not is_http_url(base_url):
        raise ConfigurationError("base_url must be an absolute http(s) URL")
    target = citation.target
    label = _label(citation, target)
    return ResolvedCitation(label, _links(citation, target, label, base_url))
