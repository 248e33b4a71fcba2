"""Account ids, an app origin, a valid wire value per kind, a row builder, a hostile dict."""

from __future__ import annotations

from typing import Any

from silvia_client.citations import Citation

ID = "acc_9f8e7d6c5b4a3210"
ID2 = "acc_0123456789abcdef"
DOT_SEGMENTS = (".", "..")  # ids whose path would be a dot segment: no link
BASE = "https://app.example.com"
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
    **{kind: {"url"} for kind in ("web", "tax_reference", "card_document", "mortgage_reference")},
    "market_data": {"ticker"},
    "analysis": set(),
    "account": {"accountId", "provider"},
    "accounts": {"accounts"},
    "portfolio": set(),
}


def cite(target: Any = None, **fields: Any) -> Citation:
    row: dict[str, Any] = {"source": "silvia://your-account/checking", **fields}
    if target is not None:
        row["target"] = target
    return Citation.model_validate(row)


class RaisingDict(dict):  # type: ignore[type-arg]
    """A dict whose every read raises (get, [], items, keys, iteration, len, contains)."""

    def _boom(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("hostile mapping")

    get = __getitem__ = items = keys = values = __iter__ = __len__ = __contains__ = _boom
