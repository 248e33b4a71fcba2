"""`parse_citation_target`: the wire contract's rules, one by one.

Rules: wire-contract.md, "CitationTarget and how a client reads it".
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    parse_citation_target,
)

from ._parse_cases import ID, ID2, OWN_FIELDS, VALID
from .strategies import (
    KINDS,
    PROPERTY,
    REAL_KEYS,
    URL_KINDS,
    canonical_wire_targets,
    extra_fields,
    json_like,
)

URL_TARGETS: dict[str, type[TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget]] = {
    "tax_reference": TaxReferenceTarget,
    "card_document": CardDocumentTarget,
    "mortgage_reference": MortgageReferenceTarget,
}

# --------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    "kind",
    [
        "",
        "Web",
        "WEB",
        "web ",
        " web",
        "webpage",
        "unknown",
        "account\x00",
        "accounts_v2",
        "\ud800",
    ],
)
def test_unknown_kind_gives_none(kind: str) -> None:
    assert parse_citation_target({"kind": kind, "url": "https://example.com"}) is None


@pytest.mark.parametrize("kind", [None, 1, 1.0, True, ["web"], {"web": 1}])
def test_kind_of_wrong_type_gives_none(kind: object) -> None:
    assert parse_citation_target({"kind": kind, "url": "https://example.com"}) is None


def test_missing_kind_gives_none() -> None:
    assert parse_citation_target({"url": "https://example.com"}) is None
    assert parse_citation_target({}) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com",
        "https://example.com",
        "https://example.com/",
        "https://example.com:8443/a/b?c=d&e=f#g",
        "https://user:pass@example.com/",
        "https://127.0.0.1/x",
        "http://[::1]:8080/",
        "https://www.ecfr.gov/current/title-12/chapter-X/part-1026",
        "https://example.com/caf%C3%A9",
        "https://example.com/café",
        "HTTPS://EXAMPLE.COM/",
        "Http://Example.com",
    ],
)
def test_web_accepts_absolute_http_urls(url: str) -> None:
    assert parse_citation_target({"kind": "web", "url": url}) == WebTarget(url)


BAD_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    " javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.com/file",
    "mailto:someone@example.com",
    "silvia://tax-authority/irc/1",
    "/relative/path",
    "relative/path",
    "//example.com/protocol-relative",
    "example.com",
    "www.example.com",
    "http:example.com",
    "http:/example.com",
    "https:example.com",
    "http://",
    "https://",
    "https:///path",
    "https://?q=1",
    "https://#frag",
    "https://:443/",
    "https://user@/",
    "https://user:pass@",
    "",
    " ",
    " https://example.com",
    "https://example.com ",
    "https://exa mple.com",
    "https://example.com/a b",
    "https://example.com/\n",
    "https://example.com/\t",
    "\thttps://example.com",
    "https://example.com\r\n",
    "https://example.com/\x00",
    "https://example.com/\x7f",
    "https://example.com/\x1b",
    "https://exa\ud800mple.com",
    "https://example.com/\udc00",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_web_rejects_anything_but_an_absolute_http_url(url: str) -> None:
    assert parse_citation_target({"kind": "web", "url": url}) is None


@pytest.mark.parametrize("url", [None, 1, 1.5, True, ["https://example.com"], {"href": "x"}])
def test_web_rejects_url_of_wrong_type(url: object) -> None:
    assert parse_citation_target({"kind": "web", "url": url}) is None


def test_web_requires_url() -> None:
    assert parse_citation_target({"kind": "web"}) is None


@pytest.mark.parametrize(
    "url",
    [
        # whitespace inside the host: no browser opens these
        "https://\u3000/",
        "https://exa\u00a0mple.com/",
        "https://example.com\u2028/",
        "https://example.com\x85",
    ],
)
def test_web_rejects_unicode_whitespace_in_host(url: str) -> None:
    # The contract: "whitespace -> None". ASCII whitespace is rejected anywhere
    # (above); a host made of, or broken by, Unicode whitespace is no more a URL.
    assert parse_citation_target({"kind": "web", "url": url}) is None


@pytest.mark.parametrize("kind", URL_KINDS)
def test_document_kinds_url_null_missing_or_http(kind: str) -> None:
    cls = URL_TARGETS[kind]
    assert parse_citation_target({"kind": kind, "url": None}) == cls(None)
    assert parse_citation_target({"kind": kind}) == cls(None)
    for url in ("https://www.irs.gov/pub/irs-pdf/p17.pdf", "http://example.com/x"):
        result = parse_citation_target({"kind": kind, "url": url})
        assert result == cls(url)
        assert isinstance(result, cls)
        assert result.url == url


@pytest.mark.parametrize("kind", URL_KINDS)
@pytest.mark.parametrize("url", [*BAD_URLS, 0, False, [], {}, ["https://example.com"]])
def test_document_kinds_reject_anything_else(kind: str, url: object) -> None:
    assert parse_citation_target({"kind": kind, "url": url}) is None


def test_market_data_needs_a_non_empty_string_ticker() -> None:
    assert parse_citation_target({"kind": "market_data", "ticker": "AAPL"}) == MarketDataTarget(
        "AAPL"
    )
    assert parse_citation_target({"kind": "market_data", "ticker": "BRK.B"}) == MarketDataTarget(
        "BRK.B"
    )
    for ticker in ("", None, 1, 1.0, True, ["AAPL"], {"symbol": "AAPL"}):
        assert parse_citation_target({"kind": "market_data", "ticker": ticker}) is None
    assert parse_citation_target({"kind": "market_data"}) is None


@pytest.mark.parametrize("kind", ["analysis", "portfolio"])
def test_fieldless_kinds(kind: str) -> None:
    expected = AnalysisTarget() if kind == "analysis" else PortfolioTarget()
    assert parse_citation_target({"kind": kind}) == expected
    # Other kinds' fields, whatever their value, are extras here.
    noisy = {"kind": kind, "url": "javascript:x", "ticker": 1, "accountId": None, "accounts": 3}
    assert parse_citation_target(noisy) == expected


@pytest.mark.parametrize("provider", ["plaid", "manual", "snaptrade"])
def test_account_with_known_provider(provider: str) -> None:
    result = parse_citation_target({"kind": "account", "accountId": ID, "provider": provider})
    assert result == AccountTarget(ID, provider)  # type: ignore[arg-type]
    assert isinstance(result, AccountTarget)
    assert result.provider == provider  # readable as an attribute, for routing


UNKNOWN_PROVIDERS: list[object] = [
    None,
    "",
    "Plaid",
    "PLAID",
    " plaid",
    "plaid ",
    "stripe",
    "coinbase",
    "\ud800",
    1,
    0,
    True,
    1.5,
    math.nan,
    ["plaid"],
    {"name": "plaid"},
]


@pytest.mark.parametrize("provider", UNKNOWN_PROVIDERS)
def test_account_with_unknown_provider_keeps_the_account(provider: object) -> None:
    result = parse_citation_target({"kind": "account", "accountId": ID, "provider": provider})
    assert result == AccountTarget(ID, None)
    assert isinstance(result, AccountTarget)
    assert result.provider is None


def test_account_with_missing_provider_keeps_the_account() -> None:
    assert parse_citation_target({"kind": "account", "accountId": ID}) == AccountTarget(ID, None)


@pytest.mark.parametrize("account_id", ["", None, 1, 1.0, True, [ID], {"id": ID}])
def test_account_needs_a_non_empty_string_id(account_id: object) -> None:
    value = {"kind": "account", "accountId": account_id, "provider": "plaid"}
    assert parse_citation_target(value) is None


def test_account_missing_id_gives_none() -> None:
    assert parse_citation_target({"kind": "account", "provider": "plaid"}) is None
    # snake_case is not the wire name
    assert parse_citation_target({"kind": "account", "account_id": ID}) is None


def test_accounts_keeps_every_entry_in_order() -> None:
    value = {
        "kind": "accounts",
        "accounts": [
            {"accountId": ID, "provider": "plaid"},
            {"accountId": ID2, "provider": "unknown-vendor"},
            {"accountId": ID, "provider": "snaptrade"},
            {"accountId": "x"},
        ],
    }
    assert parse_citation_target(value) == AccountsTarget(
        (
            AccountRef(ID, "plaid"),
            AccountRef(ID2, None),
            AccountRef(ID, "snaptrade"),
            AccountRef("x", None),
        )
    )


@pytest.mark.parametrize("entries", [[], None, {}, "accounts", 1, {"accountId": ID}])
def test_accounts_needs_a_non_empty_list(entries: object) -> None:
    assert parse_citation_target({"kind": "accounts", "accounts": entries}) is None
    assert parse_citation_target({"kind": "accounts"}) is None


@pytest.mark.parametrize(
    "bad",
    [
        None,
        ID,
        [ID],
        1,
        {},
        {"accountId": ""},
        {"accountId": None, "provider": "plaid"},
        {"accountId": 12345678901234567},
        {"provider": "plaid"},
        {"account_id": ID},
    ],
)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_one_bad_accounts_entry_voids_the_target(bad: object, position: int) -> None:
    entries: list[object] = [{"accountId": ID, "provider": "plaid"}, {"accountId": ID2}]
    entries.insert(position, bad)
    assert parse_citation_target({"kind": "accounts", "accounts": entries}) is None


@PROPERTY
@given(canonical_wire_targets, extra_fields)
def test_unknown_extra_fields_are_ignored(wire: dict[str, Any], extras: dict[str, Any]) -> None:
    expected = parse_citation_target(wire)
    assert expected is not None
    assert parse_citation_target({**extras, **wire}) == expected
    if wire["kind"] == "accounts":
        # ...also inside the entries of `accounts`.
        noisy = {**wire, "accounts": [{**extras, **e} for e in wire["accounts"]]}
        assert parse_citation_target(noisy) == expected


@PROPERTY
@given(canonical_wire_targets)
def test_parse_neither_mutates_nor_aliases_its_input(wire: dict[str, Any]) -> None:
    before = copy.deepcopy(wire)
    result = parse_citation_target(wire)
    assert wire == before
    assert result is not None
    # Changing the wire dict afterwards does not change the target.
    snapshot = result.to_wire()
    for value in wire.values():
        if isinstance(value, list):
            value.clear()
    wire.clear()
    assert result.to_wire() == snapshot


@PROPERTY
@given(st.sampled_from(KINDS), json_like)
def test_kind_decides_which_fields_matter(kind: str, noise: Any) -> None:
    # A field of another kind never makes a target valid or invalid.
    expected = parse_citation_target(VALID[kind])
    assert expected is not None
    for key in set(REAL_KEYS) - OWN_FIELDS[kind] - {"kind"}:
        assert parse_citation_target({**VALID[kind], key: noise}) == expected
