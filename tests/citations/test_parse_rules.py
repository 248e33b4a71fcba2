"""`parse_citation_target`: the wire contract's rules, one by one.

Rules: wire-contract.md, "CitationTarget and how a client reads it".
"""

from __future__ import annotations

import copy
import math
from typing import Any

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


UNKNOWN_KINDS: list[object] = [
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
    # ...and of the wrong type
    None,
    1,
    1.0,
    True,
    ["web"],
    {"web": 1},
]


def test_unknown_kind_or_kind_of_wrong_type_gives_none() -> None:
    for kind in UNKNOWN_KINDS:
        assert parse_citation_target({"kind": kind, "url": "https://example.com"}) is None, kind


def test_missing_kind_gives_none() -> None:
    assert parse_citation_target({"url": "https://example.com"}) is None
    assert parse_citation_target({}) is None


GOOD_URLS = [
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
]


def test_web_accepts_absolute_http_urls() -> None:
    for url in GOOD_URLS:
        assert parse_citation_target({"kind": "web", "url": url}) == WebTarget(url), url


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


# Whitespace inside the host: no browser opens these. The contract: "whitespace ->
# None". ASCII whitespace is rejected anywhere (above); a host made of, or broken by,
# Unicode whitespace is no more a URL.
UNICODE_SPACE_HOSTS = [
    "https://\u3000/",
    "https://exa\u00a0mple.com/",
    "https://example.com\u2028/",
    "https://example.com\x85",
]
WRONG_TYPES: list[object] = [
    None,
    0,
    1,
    1.5,
    True,
    False,
    [],
    {},
    ["https://example.com"],
    {"href": "x"},
]


def test_web_rejects_anything_but_an_absolute_http_url() -> None:
    for url in [*BAD_URLS, *UNICODE_SPACE_HOSTS, *WRONG_TYPES]:
        assert parse_citation_target({"kind": "web", "url": url}) is None, url


def test_web_requires_url() -> None:
    assert parse_citation_target({"kind": "web"}) is None


def test_document_kinds_url_null_missing_or_http() -> None:
    for kind in URL_KINDS:
        cls = URL_TARGETS[kind]
        assert parse_citation_target({"kind": kind, "url": None}) == cls(None)
        assert parse_citation_target({"kind": kind}) == cls(None)
        for url in ("https://www.irs.gov/pub/irs-pdf/p17.pdf", "http://example.com/x"):
            result = parse_citation_target({"kind": kind, "url": url})
            assert result == cls(url)
            assert isinstance(result, cls)
            assert result.url == url


def test_document_kinds_reject_anything_else() -> None:
    for kind in URL_KINDS:
        for url in [*BAD_URLS, *UNICODE_SPACE_HOSTS, *WRONG_TYPES[1:]]:  # not None: no link
            assert parse_citation_target({"kind": kind, "url": url}) is None, (kind, url)


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


def test_fieldless_kinds() -> None:
    for kind, expected in (("analysis", AnalysisTarget()), ("portfolio", PortfolioTarget())):
        assert parse_citation_target({"kind": kind}) == expected
        # Other kinds' fields, whatever their value, are extras here.
        noisy = {"kind": kind, "url": "javascript:x", "ticker": 1, "accountId": None, "accounts": 3}
        assert parse_citation_target(noisy) == expected


def test_account_with_known_provider() -> None:
    for provider in ("plaid", "manual", "snaptrade"):
        result = parse_citation_target({"kind": "account", "accountId": ID, "provider": provider})
        assert result == AccountTarget(ID, provider)
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


def test_account_with_unknown_provider_keeps_the_account() -> None:
    for provider in UNKNOWN_PROVIDERS:
        result = parse_citation_target({"kind": "account", "accountId": ID, "provider": provider})
        assert result == AccountTarget(ID, None), provider
        assert isinstance(result, AccountTarget)
        assert result.provider is None


def test_account_with_missing_provider_keeps_the_account() -> None:
    assert parse_citation_target({"kind": "account", "accountId": ID}) == AccountTarget(ID, None)


def test_account_needs_a_non_empty_string_id() -> None:
    for account_id in ("", None, 1, 1.0, True, [ID], {"id": ID}):
        value = {"kind": "account", "accountId": account_id, "provider": "plaid"}
        assert parse_citation_target(value) is None, account_id


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


def test_accounts_needs_a_non_empty_list() -> None:
    not_lists: list[object] = [[], None, {}, "accounts", 1, {"accountId": ID}]
    for entries in not_lists:
        assert parse_citation_target({"kind": "accounts", "accounts": entries}) is None, entries
    assert parse_citation_target({"kind": "accounts"}) is None


BAD_ENTRIES: list[object] = [
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
]


def test_one_bad_accounts_entry_voids_the_target() -> None:
    for bad in BAD_ENTRIES:
        for position in (0, 1, 2):
            entries: list[object] = [{"accountId": ID, "provider": "plaid"}, {"accountId": ID2}]
            entries.insert(position, bad)
            wire = {"kind": "accounts", "accounts": entries}
            assert parse_citation_target(wire) is None, wire


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
