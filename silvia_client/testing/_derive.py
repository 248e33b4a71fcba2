"""The server's target rules: tool results in, cited sources and their targets out.

Where things are: the reference server's copy of the doc's "What the server
cites, and the target each source gets". `search_results(tool_result)` makes
the citable blocks, each with a source, title, text and a claim;
`TargetRegistry` keeps one meaning per source per turn (a later write of an
account source pools its accounts; any other disagreement leaves it untyped).
The account-id rule is the SDK's `citations._accounts`, reused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import parse_qs, urlsplit

from ..citations import (
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
    account_ref_from_row,
    is_http_url,
)
from ..citations._accounts import ACCOUNT_ID_COLUMNS
from ._script import (
    ExecutePython,
    ExecuteSql,
    LibraryTool,
    ReadLibraryDocument,
    Row,
    SearchWeb,
    ToolResult,
)

ACCOUNT_SOURCE_PREFIX = "silvia://your-account/"
PORTFOLIO_SOURCE = "silvia://your-portfolio"
FINNHUB_SOURCE = "silvia://market-data/finnhub"
ANALYSIS_SOURCE = "silvia://analysis"
SEARCH_WEB_SOURCE = "silvia://search/search_web"

_LIBRARY: dict[
    LibraryTool, tuple[str, type[TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget]]
] = {
    "read_tax_authority": ("silvia://tax-authority/", TaxReferenceTarget),
    "read_credit_card_document": ("silvia://credit-card-corpus/", CardDocumentTarget),
    "read_mortgage_authority": ("silvia://mortgage-code/", MortgageReferenceTarget),
}

# A vendor name must not reach titles, text or cited_text: the `source` column
# names one, so it is never rendered, and id columns whose names carry one
# (`snaptrade_account_id`, `manual_account_uuid`) are shown under a neutral name.
_HIDDEN_COLUMNS = frozenset({"source"})
_SHOWN_AS = {column: "account_id" for column, _ in ACCOUNT_ID_COLUMNS}

_TICKER = re.compile(r"[A-Z][A-Z0-9.\-]{0,11}")


@dataclass(frozen=True)
class TargetClaim:
    """The result says the source is exactly this target."""

    target: CitationTarget


@dataclass(frozen=True)
class AccountClaim:
    """An account source: the accounts its rows name, or None when a row names none."""

    refs: tuple[AccountRef, ...] | None


@dataclass(frozen=True)
class NoTarget:
    """The result gives its source no target (`silvia://search/search_web`)."""


Claim: TypeAlias = TargetClaim | AccountClaim | NoTarget


@dataclass(frozen=True)
class SearchResult:
    """One `search_result` block a tool result contributes to the turn."""

    source: str
    title: str
    content: tuple[str, ...]
    claim: Claim


def label_slug(label: str) -> str:
    """The `<label slug>` of `silvia://your-account/<label slug>`."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    if not slug:
        raise ValueError(f"label {label!r} has no letters or digits to make a source of")
    return slug


def humanize_citation_url(url: str) -> str:
    """A download URL as the readable page it stands for (the doc's `humanizeCitationUrl`).

    The doc names two cases: eCFR XML (the versioner API) and US Code ZIP
    release points. Everything else passes through unchanged.
    """
    parts = urlsplit(url)
    host = parts.netloc.lower()
    if host.endswith("ecfr.gov") and parts.path.endswith(".xml"):
        title = re.search(r"title-(\d+)\.xml$", parts.path)
        if title:
            query = parse_qs(parts.query)
            page = f"https://www.ecfr.gov/current/title-{title.group(1)}"
            if "section" in query:
                return f"{page}/section-{query['section'][0]}"
            if "part" in query:
                return f"{page}/part-{query['part'][0]}"
            return page
    if host.endswith("uscode.house.gov") and parts.path.endswith(".zip"):
        title = re.search(r"usc(\d+)@", parts.path)
        if title:
            return (
                "https://uscode.house.gov/view.xhtml?"
                f"path=/prelim@title{int(title.group(1))}&edition=prelim"
            )
    return url


def search_results(result: ToolResult) -> list[SearchResult]:
    """The `search_result` blocks one tool result writes, in order."""
    if isinstance(result, ExecuteSql):
        return _sql(result)
    if isinstance(result, ExecutePython):
        return _python(result)
    if isinstance(result, ReadLibraryDocument):
        return [_library(result)]
    if isinstance(result, SearchWeb):
        return _search_web(result)
    raise TypeError(f"not a tool result: {type(result).__name__}")


def _row_text(row: Row) -> str:
    return ", ".join(
        f"{_SHOWN_AS.get(name, name)}: {value}"
        for name, value in row.items()
        if name not in _HIDDEN_COLUMNS
    )


def _sql(result: ExecuteSql) -> list[SearchResult]:
    content = tuple(_row_text(row) for row in result.rows)
    if result.label_column is None:
        return [
            SearchResult(
                PORTFOLIO_SOURCE, result.portfolio_title, content, TargetClaim(PortfolioTarget())
            )
        ]
    groups: dict[str, list[Row]] = {}
    for row in result.rows:
        label = row.get(result.label_column)
        if label is None:
            raise ValueError(f"a row has no {result.label_column!r} to label it by")
        groups.setdefault(str(label), []).append(row)
    return [
        SearchResult(
            ACCOUNT_SOURCE_PREFIX + label_slug(label),
            label,
            tuple(_row_text(row) for row in rows),
            _account_claim(rows),
        )
        for label, rows in groups.items()
    ]


def _account_claim(rows: list[Row]) -> AccountClaim:
    refs: dict[str, AccountRef] = {}
    for row in rows:
        ref = account_ref_from_row(row)
        if ref is None:
            return AccountClaim(None)  # one row without an id leaves the label untyped
        refs[ref.account_id] = _merge_ref(refs.get(ref.account_id), ref)
    return AccountClaim(tuple(refs.values()))


def _merge_ref(known: AccountRef | None, new: AccountRef) -> AccountRef:
    # The same account seen with and without its `source` column keeps the provider.
    if known is None or (known.provider is None and new.provider is not None):
        return new
    return known


def _python(result: ExecutePython) -> list[SearchResult]:
    blocks = [
        SearchResult(
            article.url, article.title, (article.text,), TargetClaim(WebTarget(article.url))
        )
        for article in result.articles
    ]
    if not result.output:
        return blocks
    analysis = TargetClaim(AnalysisTarget())
    if "finnhub" not in f"{result.code}\n{result.output}".lower():
        return [*blocks, SearchResult(ANALYSIS_SOURCE, result.title, (result.output,), analysis)]
    untickered: list[str] = []
    for ticker, text in _payloads(result.output):
        if ticker is None:
            untickered.append(text)
        else:
            claim = TargetClaim(MarketDataTarget(ticker))
            blocks.append(
                SearchResult(f"{FINNHUB_SOURCE}/{ticker}", f"{ticker} market data", (text,), claim)
            )
    if untickered:
        blocks.append(SearchResult(FINNHUB_SOURCE, "Live data", tuple(untickered), analysis))
    return blocks


def _payloads(output: str) -> list[tuple[str | None, str]]:
    """Each printed payload with the ticker it was printed with, if any."""
    try:
        payload = json.loads(output)
    except ValueError:
        return [(None, output)]
    items = payload if isinstance(payload, list) else [payload]
    found: list[tuple[str | None, str]] = []
    for item in items:
        ticker = None
        if isinstance(item, dict):
            value = item.get("symbol", item.get("ticker"))
            if isinstance(value, str) and _TICKER.fullmatch(value.upper()):
                ticker = value.upper()
        found.append((ticker, json.dumps(item)))
    return found


def _library(result: ReadLibraryDocument) -> SearchResult:
    prefix, kind = _LIBRARY[result.tool]
    title = result.sidecar.get("title")
    if not isinstance(title, str) or not title:
        title = result.path.rsplit("/", 1)[-1]
    source_url = result.sidecar.get("source_url")
    if is_http_url(source_url):
        assert isinstance(source_url, str)
        url = humanize_citation_url(source_url)
        return SearchResult(url, title, (result.text,), TargetClaim(kind(url)))
    source = prefix + result.path.lstrip("/")
    return SearchResult(source, title, (result.text,), TargetClaim(kind(None)))


def _search_web(result: SearchWeb) -> list[SearchResult]:
    return [
        SearchResult(hit.url, hit.title, (hit.text,), TargetClaim(WebTarget(hit.url)))
        if hit.url is not None and is_http_url(hit.url)
        else SearchResult(SEARCH_WEB_SOURCE, hit.title, (hit.text,), NoTarget())
        for hit in result.results
    ]


# None: a source that lost (or never had) a target; it stays untyped for the turn.
_Entry: TypeAlias = "dict[str, AccountRef] | CitationTarget | None"


class TargetRegistry:
    """One meaning per source per turn (the doc's registry, `citationTargets`); one a turn."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def write(self, result: SearchResult) -> None:
        """Record that a tool call wrote `result` (in turn order)."""
        claim = result.claim
        known = self._entries.get(result.source)
        if result.source not in self._entries:
            self._entries[result.source] = _first_entry(claim)
        elif isinstance(known, dict) and isinstance(claim, AccountClaim) and claim.refs is not None:
            # The citation cannot say which result it came from: pool the accounts.
            for ref in claim.refs:
                known[ref.account_id] = _merge_ref(known.get(ref.account_id), ref)
        elif isinstance(claim, TargetClaim) and known == claim.target:
            pass
        else:
            self._entries[result.source] = None

    def target_for(self, source: str) -> CitationTarget | None:
        """The source's target now, or None (never written, or untyped)."""
        entry = self._entries.get(source)
        if isinstance(entry, dict):
            refs = tuple(entry.values())
            if len(refs) == 1:
                return AccountTarget(refs[0].account_id, refs[0].provider)
            return AccountsTarget(refs)
        return entry

    def sources(self) -> list[str]:
        """Every source written so far, in first-write order."""
        return list(self._entries)


def _first_entry(claim: Claim) -> _Entry:
    if isinstance(claim, TargetClaim):
        return claim.target
    if isinstance(claim, AccountClaim) and claim.refs:
        return {ref.account_id: ref for ref in claim.refs}
    # A label with a row lacking an id, or a result with no target: untyped, and
    # since any later disagreement would untype it anyway, it stays so.
    return None
