"""Account ids and one valid wire value per kind, shared by the `test_parse_*` modules."""

from __future__ import annotations

from typing import Any

ID = "acc_9f8e7d6c5b4a3210"
ID2 = "acc_0123456789abcdef"
# One valid wire value per kind, and the fields each kind reads.
VALID: dict[str, dict[str, Any]] = {
    "web": {"kind": "web", "url": "https://example.com"},
    "tax_reference": {"kind": "tax_reference", "url": "https://www.irs.gov/p17"},
    "card_document": {"kind": "card_document", "url": None},
    "mortgage_reference": {"kind": "mortgage_reference", "url": "http://example.com"},
    "market_data": {"kind": "market_data", "ticker": "AAPL"},
    "analysis": {"kind": "analysis"},
    "account": {"kind": "account", "accountId": ID, "provider": "plaid"},
    "accounts": {"kind": "accounts", "accounts": [{"accountId": ID, "provider": "manual"}]},
    "portfolio": {"kind": "portfolio"},
}
OWN_FIELDS: dict[str, set[str]] = {
    "web": {"url"},
    "tax_reference": {"url"},
    "card_document": {"url"},
    "mortgage_reference": {"url"},
    "market_data": {"ticker"},
    "analysis": set(),
    "account": {"accountId", "provider"},
    "accounts": {"accounts"},
    "portfolio": set(),
}
