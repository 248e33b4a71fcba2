"""The nine kinds of citation target, as light immutable values.

Plain frozen dataclasses rather than pydantic models: a stream can carry many
targets and they are built by `parse_citation_target`, which does its own
checking, so a validating model would only add cost. Values compare and hash by
their fields; attributes are snake_case, and `to_wire()` gives back the camelCase
dict the server sent.

`provider` names a vendor and is for routing only, so it is left out of every
repr (`field(repr=False)`) while staying part of equality and the wire form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol, TypeAlias

__all__ = [
    "PROVIDERS",
    "TARGET_TYPES",
    "AccountProvider",
    "AccountRef",
    "AccountTarget",
    "AccountsTarget",
    "AnalysisTarget",
    "CardDocumentTarget",
    "CitationTarget",
    "MarketDataTarget",
    "MortgageReferenceTarget",
    "PortfolioTarget",
    "TargetKind",
    "TaxReferenceTarget",
    "WebTarget",
]

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


@dataclass(frozen=True, slots=True)
class AccountRef:
    """One of the user's own accounts: its id, and the vendor that holds it (never shown)."""

    account_id: str
    provider: AccountProvider | None = field(default=None, repr=False)

    def to_wire(self) -> WireDict:
        """The account as the server's JSON object (inside an `accounts` target)."""
        return {"accountId": self.account_id, "provider": self.provider}


@dataclass(frozen=True, slots=True)
class WebTarget:
    """A web page."""

    kind: ClassVar[Literal["web"]] = "web"
    url: str

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "web", "url": self.url}


@dataclass(frozen=True, slots=True)
class TaxReferenceTarget:
    """A tax authority document; `url` is None for a document of Silvia's own library."""

    kind: ClassVar[Literal["tax_reference"]] = "tax_reference"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "tax_reference", "url": self.url}


@dataclass(frozen=True, slots=True)
class CardDocumentTarget:
    """A credit card issuer's document; `url` is None for a library copy."""

    kind: ClassVar[Literal["card_document"]] = "card_document"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "card_document", "url": self.url}


@dataclass(frozen=True, slots=True)
class MortgageReferenceTarget:
    """A mortgage regulator's or agency's document; `url` is None for a library copy."""

    kind: ClassVar[Literal["mortgage_reference"]] = "mortgage_reference"
    url: str | None = None

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "mortgage_reference", "url": self.url}


@dataclass(frozen=True, slots=True)
class MarketDataTarget:
    """A ticker's market data."""

    kind: ClassVar[Literal["market_data"]] = "market_data"
    ticker: str

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "market_data", "ticker": self.ticker}


@dataclass(frozen=True, slots=True)
class AnalysisTarget:
    """The output of an analysis Silvia ran (labelled by its source: live data or analysis)."""

    kind: ClassVar[Literal["analysis"]] = "analysis"

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
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
        """The target as the server's JSON object."""
        return {"kind": "account", "accountId": self.account_id, "provider": self.provider}


@dataclass(frozen=True, slots=True)
class AccountsTarget:
    """Several of the user's accounts: the citation covers all of them."""

    kind: ClassVar[Literal["accounts"]] = "accounts"
    accounts: tuple[AccountRef, ...]

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
        return {"kind": "accounts", "accounts": [ref.to_wire() for ref in self.accounts]}


@dataclass(frozen=True, slots=True)
class PortfolioTarget:
    """The user's whole portfolio."""

    kind: ClassVar[Literal["portfolio"]] = "portfolio"

    def to_wire(self) -> WireDict:
        """The target as the server's JSON object."""
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
TARGET_TYPES: tuple[type[CitationTarget], ...] = (
    WebTarget,
    TaxReferenceTarget,
    CardDocumentTarget,
    MortgageReferenceTarget,
    MarketDataTarget,
    AnalysisTarget,
    AccountTarget,
    AccountsTarget,
    PortfolioTarget,
)


class TargetedRow(Protocol):
    """What the ground floor reads of a citation row: a `Citation` is one.

    The links (`resolve_citation`) and the final word (`final_targets`) read rows
    through this, so they need not import the row models (which sit above them).
    """

    @property
    def source(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def target(self) -> CitationTarget | None: ...
