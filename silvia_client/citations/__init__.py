"""Citation targets: typed values, the defensive parser, citation rows, links and account matching.

Where things are:

- `_targets.py`  the nine target kinds and `AccountRef` (values; `to_wire()`);
                 `parse_citation_target`: wire value -> target or None, never raises;
                 `RowError`, `CitationRows`: what a loader of rows reports;
                 `final_targets`, `FinalTargets`: a source's final target (`target_for`)
- `_rows.py`     `Citation`, `InlineCitation` (the pydantic models); `load_citations`
- `_links.py`    `account_href` (JavaScript's encodeURIComponent), `resolve_citation`
- `_accounts.py` the doc's account-id rule and matching refs to the user's accounts
"""

from typing import TYPE_CHECKING

from .._lazy import load_on_first_use
from ._accounts import (
    account_id_candidates,
    account_ref_from_row,
    find_account,
    find_accounts,
    is_account_id,
)
from ._links import (
    CitationLink,
    InvalidAccountIdError,
    ResolvedCitation,
    account_href,
    encode_uri_component,
    resolve_citation,
)
from ._targets import (
    PROVIDERS,
    AccountProvider,
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationRows,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    RowError,
    TargetKind,
    TaxReferenceTarget,
    WebTarget,
    is_http_url,
    parse_citation_target,
)

__all__ = [
    "PROVIDERS",
    "AccountProvider",
    "AccountRef",
    "AccountTarget",
    "AccountsTarget",
    "AnalysisTarget",
    "CardDocumentTarget",
    "Citation",
    "CitationLink",
    "CitationRows",
    "CitationTarget",
    "InlineCitation",
    "InvalidAccountIdError",
    "MarketDataTarget",
    "MortgageReferenceTarget",
    "PortfolioTarget",
    "ResolvedCitation",
    "RowError",
    "TargetKind",
    "TaxReferenceTarget",
    "WebTarget",
    "account_href",
    "account_id_candidates",
    "account_ref_from_row",
    "encode_uri_component",
    "find_account",
    "find_accounts",
    "is_account_id",
    "is_http_url",
    "load_citations",
    "parse_citation_target",
    "resolve_citation",
]

if TYPE_CHECKING:
    from ._rows import Citation, InlineCitation, load_citations

# The citation rows are pydantic models. Like `import pydantic` itself, importing this
# package leaves pydantic's model machinery (about 40 ms) until first use (`_lazy.py`).
load_on_first_use(__name__, {"._rows": ("Citation", "InlineCitation", "load_citations")})
