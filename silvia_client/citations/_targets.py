"""The ground floor: the nine citation targets, the parser, what a loader of rows reports, and
a source's final target (`target_for`).

Targets are frozen dataclasses, not pydantic models: a stream carries many and the parser checks
them itself. `provider` names a vendor, for routing only: it is in equality and `to_wire()`, never
in a repr, and `without_provider` drops it from every serialization not asked for by name
(`asks_for_provider`). `parse_citation_target` is hand-written over plain dicts: it is on the hot
path of every streamed citation. `RowError` and `CitationRows` live here, not beside the models, so
that code reporting on rows loads no pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, Literal, TypeAlias, TypeVar

if TYPE_CHECKING:
    from ._rows import Citation

AccountProvider: TypeAlias = Literal["plaid", "manual", "snaptrade"]
PROVIDERS: frozenset[str] = frozenset({"plaid", "manual", "snaptrade"})

TargetKind: TypeAlias = Literal[
    "web",
    "tax_reference",
    "card_document",
    "mortgage_reference",
    "market_data",
    "analysis",
    "account",
    "accounts",
    "portfolio",
]

WireDict: TypeAlias = dict[str, object]

INCLUDE_PROVIDER = "include_provider"


def asks_for_provider(context: object) -> bool:
    """Whether a pydantic serialization `context` holds `{"include_provider": True}`."""
    return isinstance(context, dict) and context.get(INCLUDE_PROVIDER) is True


def without_provider(value: object) -> object:
    """`value` (a dump) with every `provider` member left out, at any depth."""
    if isinstance(value, dict):
        return {key: without_provider(item) for key, item in value.items() if key != "provider"}
    if isinstance(value, list):
        return [without_provider(item) for item in value]
    if isinstance(value, tuple):  # a python-mode dump keeps an extra's tuple a tuple
        return tuple(without_provider(item) for item in value)
    return value


@dataclass(frozen=True, slots=True)
class AccountRef:
    """One of the user's own accounts: its id, and the vendor that holds it (never shown)."""

    account_id: str
    provider: AccountProvider | None = field(default=None, repr=False)

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object, `provider` included."""
        return {"accountId": self.account_id, "provider": self.provider}


@dataclass(frozen=True, slots=True)
class WebTarget:
    """A web page."""

    kind: ClassVar[Literal["web"]] = "web"
    url: str

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "web", "url": self.url}


@dataclass(frozen=True, slots=True)
class TaxReferenceTarget:
    """A tax authority document; `url` is None for a document of Silvia's own library."""

    kind: ClassVar[Literal["tax_reference"]] = "tax_reference"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "tax_reference", "url": self.url}


@dataclass(frozen=True, slots=True)
class CardDocumentTarget:
    """A credit card issuer's document; `url` is None for a library copy."""

    kind: ClassVar[Literal["card_document"]] = "card_document"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "card_document", "url": self.url}


@dataclass(frozen=True, slots=True)
class MortgageReferenceTarget:
    """A mortgage regulator's or agency's document; `url` is None for a library copy."""

    kind: ClassVar[Literal["mortgage_reference"]] = "mortgage_reference"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "mortgage_reference", "url": self.url}


@dataclass(frozen=True, slots=True)
class MarketDataTarget:
    """A ticker's market data."""

    kind: ClassVar[Literal["market_data"]] = "market_data"
    ticker: str

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "market_data", "ticker": self.ticker}


@dataclass(frozen=True, slots=True)
class AnalysisTarget:
    """The output of an analysis Silvia ran (labelled by its source: live data or analysis)."""

    kind: ClassVar[Literal["analysis"]] = "analysis"

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "analysis"}


@dataclass(frozen=True, slots=True)
class AccountTarget:
    """One of the user's own accounts."""

    kind: ClassVar[Literal["account"]] = "account"
    account_id: str
    provider: AccountProvider | None = field(default=None, repr=False)

    @property
    def ref(self) -> AccountRef:
        return AccountRef(self.account_id, self.provider)

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object, `provider` included."""
        return {"kind": "account", "accountId": self.account_id, "provider": self.provider}


@dataclass(frozen=True, slots=True)
class AccountsTarget:
    """Several of the user's accounts: the citation covers all of them."""

    kind: ClassVar[Literal["accounts"]] = "accounts"
    accounts: tuple[AccountRef, ...]

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object, each `provider` included."""
        return {"kind": "accounts", "accounts": [ref.to_wire() for ref in self.accounts]}


@dataclass(frozen=True, slots=True)
class PortfolioTarget:
    """The user's whole portfolio."""

    kind: ClassVar[Literal["portfolio"]] = "portfolio"

    def to_wire(self) -> WireDict:
        """The full wire form (for routing): the server's JSON object."""
        return {"kind": "portfolio"}


CitationTarget: TypeAlias = (
    WebTarget
    | TaxReferenceTarget
    | CardDocumentTarget
    | MortgageReferenceTarget
    | MarketDataTarget
    | AnalysisTarget
    | AccountTarget
    | AccountsTarget
    | PortfolioTarget
)


CitationT = TypeVar("CitationT", bound="Citation")


@dataclass(frozen=True)
class RowError:
    """A citation row that could not be read: where it was and why (never its content)."""

    index: int
    reason: str
    raw: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class CitationRows(Generic[CitationT]):
    """The rows of a citation list that could be read, and the ones that could not."""

    citations: tuple[CitationT, ...]
    errors: tuple[RowError, ...] = ()


def final_targets(
    streamed: Iterable[Citation], summary: Iterable[Citation]
) -> dict[str, CitationTarget | None]:
    """Each source's final target (None: untyped), streamed sources first, in order. Read off
    the rows as sent: the one-meaning-per-source registry is the server's (a turn resumed from
    a checkpoint written before targets existed can stream a source untyped, then typed)."""
    targets = {row.source: row.target for row in streamed}  # the last streamed row wins
    for row in summary:
        targets[row.source] = row.target  # the summary over the stream; its last row wins
    return targets


class FinalTargets:
    """`target_for` of a `Turn` or `Message`, which declare `_targets`, an empty dict."""

    __slots__ = ()

    citations: Sequence[Citation]
    inline_citations: Sequence[Citation]
    _targets: dict[str, CitationTarget | None]

    def _final_targets(self) -> dict[str, CitationTarget | None]:
        if not self._targets:  # filled in place: the frozen value is never reassigned
            self._targets.update(final_targets(self.inline_citations, self.citations))
        return self._targets

    def target_for(self, source: str) -> CitationTarget | None:
        """The server's final word on `source`: its target in the summary, else its last streamed.

        That is its last row in `citations`, else its last in `inline_citations`;
        None when that row is untyped, or `source` was never cited.
        """
        return self._final_targets().get(source)


# scheme://[userinfo@]host[:port][/path][?query][#fragment], no ASCII space or control.
_HTTP_URL = re.compile(
    r"(?i:https?)://"
    r"(?:[^\x00-\x20\x7f/?#]*@)?"  # userinfo
    r"[^\x00-\x20\x7f/?#@:][^\x00-\x20\x7f/?#@]*"  # a host, then perhaps a port
    r"(?:[/?#][^\x00-\x20\x7f]*)?"  # path, query, fragment
)

# One shared value each, as None is: a long history's rows add no object for the
# garbage collector to walk (20,000 fewer in a 100,000-row session).
_ANALYSIS = AnalysisTarget()
_PORTFOLIO = PortfolioTarget()

_OPTIONAL_URL: dict[str, Callable[[str | None], CitationTarget]] = {
    "tax_reference": TaxReferenceTarget,
    "card_document": CardDocumentTarget,
    "mortgage_reference": MortgageReferenceTarget,
}


def is_http_url(value: object) -> bool:
    """True for an absolute http or https URL with a host, free of whitespace and controls."""
    if type(value) is not str or _HTTP_URL.fullmatch(value) is None:
        return False
    # Unicode whitespace and controls end a URL in a browser as ASCII ones do, and a
    # lone surrogate cannot be sent at all; none of them counts as printable.
    return value.isascii() or all(char.isprintable() and not char.isspace() for char in value)


def _account_ref(entry: object) -> AccountRef | None:
    # An unknown or missing provider becomes None: the account itself is still good.
    if not isinstance(entry, dict):
        return None
    account_id, provider = entry.get("accountId"), entry.get("provider")
    if type(account_id) is not str or not account_id:
        return None
    known = type(provider) is str and provider in PROVIDERS
    return AccountRef(account_id, provider if known else None)


def parse_citation_target(value: object) -> CitationTarget | None:
    """Read a wire target, or give None for anything malformed or unknown. Never raises."""
    # The `try` is for a hostile dict subclass (a raising `get` or `__eq__`): the
    # contract is "None, never an exception" for any input.
    try:
        if not isinstance(value, dict):
            return None
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
                return _OPTIONAL_URL[kind](url)  # a str: checked above
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
    except Exception:
        return None
