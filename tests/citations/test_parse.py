"""`parse_citation_target`: the wire contract's rules, and it never raises, whatever it is given.

Rules: wire-contract.md, "CitationTarget and how a client reads it".
"""

from __future__ import annotations

import copy
import math
from typing import Any

from hypothesis import find, given, settings

from silvia_client.citations import (
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
    parse_citation_target,
)

from .strategies import (
    FUZZ,
    ID,
    ID2,
    KINDS,
    PROPERTY,
    REAL_KEYS,
    SURROGATES,
    URL_KINDS,
    RaisingDict,
    any_char,
    any_target_value,
    canonical_wire_targets,
    extra_fields,
    json_like,
)

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
    **{kind: {"url"} for kind in ("web", *URL_KINDS)},
    "market_data": {"ticker"},
    "analysis": set(),
    "account": {"accountId", "provider"},
    "accounts": {"accounts"},
    "portfolio": set(),
}
URL_TARGETS: dict[str, type[TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget]] = {
    "tax_reference": TaxReferenceTarget,
    "card_document": CardDocumentTarget,
    "mortgage_reference": MortgageReferenceTarget,
}
UNKNOWN_KINDS: list[object] = [
    *("", "Web", "WEB", "web ", " web", "webpage", "unknown", "account\x00", "accounts_v2"),
    *("\ud800", None, 1, 1.0, True, ["web"], {"web": 1}),
]
GOOD_URLS = [
    *("http://example.com", "https://example.com/", "https://example.com:8443/a/b?c=d&e=f#g"),
    *("https://user:pass@example.com/", "https://127.0.0.1/x", "http://[::1]:8080/"),
    *("https://example.com/caf%C3%A9", "https://example.com/café", "HTTPS://EXAMPLE.COM/"),
    "Http://Example.com",
]
BAD_URLS: list[object] = [
    *("javascript:alert(1)", "JavaScript:alert(document.cookie)", " javascript:alert(1)"),
    *("data:text/html,<script>alert(1)</script>", "data:text/html;base64,PHNjcmlwdD4="),
    *("vbscript:msgbox(1)", "file:///etc/passwd", "ftp://example.com/file", "mailto:a@b.com"),
    *("silvia://tax-authority/irc/1", "/relative/path", "relative/path", "//example.com/p"),
    *("example.com", "www.example.com", "http:example.com", "http:/example.com"),
    *("http://", "https://", "https:///path", "https://?q=1", "https://#frag", "https://:443/"),
    *("https://user@/", "https://user:pass@", "", " ", " https://example.com"),
    *("https://example.com ", "https://exa mple.com", "https://example.com/a b"),
    *("https://example.com/\n", "https://example.com/\t", "\thttps://example.com"),
    *("https://example.com\r\n", "https://example.com/\x00", "https://example.com/\x7f"),
    *("https://example.com/\x1b", "https://exa\ud800mple.com", "https://example.com/\udc00"),
    # Unicode whitespace in the host: no browser opens these ("whitespace -> None").
    *("https://\u3000/", "https://exa\u00a0mple.com/", "https://example.com\u2028/"),
    "https://example.com\x85",
    # ...and values of the wrong type (None apart: a document's url may be null).
    *(0, 1, 1.5, True, False, [], {}, ["https://example.com"], {"href": "x"}),
]
UNKNOWN_PROVIDERS: list[object] = [
    *(None, "", "Plaid", "PLAID", " plaid", "plaid ", "stripe", "coinbase", "\ud800"),
    *(1, 0, True, 1.5, math.nan, ["plaid"], {"name": "plaid"}),
]
NOT_JSON_OBJECTS: list[object] = [
    *(None, True, 0, -1, 1.5, math.nan, math.inf, -math.inf, "", "web", "\ud800"),
    *('{"kind": "web", "url": "https://example.com"}', b'{"kind": "portfolio"}'),
    *([], [{"kind": "portfolio"}], ("kind", "portfolio"), {("kind",): "portfolio"}),
    *(object(), {"kind": "portfolio"}.items()),
]
BAD_ENTRIES: list[object] = [
    *(None, ID, [ID], 1, {}, {"accountId": ""}, {"accountId": None, "provider": "plaid"}),
    *({"accountId": 12345678901234567}, {"provider": "plaid"}, {"account_id": ID}),
]
NOT_LISTS: list[object] = [[], None, {}, "accounts", 1, {"accountId": ID}]
GOOD_ENTRIES: list[object] = [{"accountId": ID, "provider": "plaid"}, {"accountId": ID2}]
ENTRIES = [
    *({"accountId": ID, "provider": "plaid"}, {"accountId": ID2, "provider": "unknown-vendor"}),
    *({"accountId": ID, "provider": "snaptrade"}, {"accountId": "x"}),
]
DOCUMENT_URLS = ("https://www.irs.gov/pub/irs-pdf/p17.pdf", "http://example.com/x", None)
# (wire value, what it reads as): each kind's rules.
RULES: list[tuple[object, CitationTarget | None]] = [
    *((value, None) for value in NOT_JSON_OBJECTS),
    *(({"kind": kind, "url": "https://example.com"}, None) for kind in UNKNOWN_KINDS),
    *(({"url": "https://example.com"}, None), ({}, None)),
    # An absolute http(s) URL; a document's may also be null or missing.
    *(({"kind": "web", "url": url}, WebTarget(url)) for url in GOOD_URLS),
    *(({"kind": "web", "url": bad}, None) for bad in [*BAD_URLS, None]),
    ({"kind": "web"}, None),
    *(({"kind": kind}, cls(None)) for kind, cls in URL_TARGETS.items()),
    *(
        ({"kind": kind, "url": url}, cls(url))
        for kind, cls in URL_TARGETS.items()
        for url in DOCUMENT_URLS
    ),
    *(({"kind": kind, "url": bad}, None) for kind in URL_TARGETS for bad in BAD_URLS),
    # A non-empty string ticker.
    *(({"kind": "market_data", "ticker": t}, MarketDataTarget(t)) for t in ("AAPL", "BRK.B")),
    *(
        ({"kind": "market_data", "ticker": bad}, None)
        for bad in ("", None, 1, 1.0, True, ["A"], {"s": "A"})
    ),
    ({"kind": "market_data"}, None),
    # An account id, kept whatever the provider (readable, for routing; an unknown one None).
    *(
        ({"kind": "account", "accountId": ID, "provider": p}, AccountTarget(ID, p))
        for p in ("plaid", "manual", "snaptrade")
    ),
    *(
        ({"kind": "account", "accountId": ID, "provider": p}, AccountTarget(ID))
        for p in UNKNOWN_PROVIDERS
    ),
    ({"kind": "account", "accountId": ID}, AccountTarget(ID)),
    *(
        ({"kind": "account", "accountId": bad, "provider": "plaid"}, None)
        for bad in ("", None, 1, 1.0, True, [ID], {"id": ID})
    ),
    *(
        ({"kind": "account", "provider": "plaid"}, None),
        ({"kind": "account", "account_id": ID}, None),
    ),
    # Every entry, in order; no list, an empty one or one bad entry anywhere: None.
    (
        {"kind": "accounts", "accounts": ENTRIES},
        AccountsTarget(
            (AccountRef(ID, "plaid"), AccountRef(ID2), AccountRef(ID, "snaptrade"), AccountRef("x"))
        ),
    ),
    *(({"kind": "accounts", "accounts": bad}, None) for bad in NOT_LISTS),
    ({"kind": "accounts"}, None),
    *(
        ({"kind": "accounts", "accounts": [*GOOD_ENTRIES[:i], bad, *GOOD_ENTRIES[i:]]}, None)
        for bad in BAD_ENTRIES
        for i in (0, 1, 2)
    ),
]


def test_each_wire_value_reads_as_the_contract_says() -> None:
    for wire, expected in RULES:
        assert parse_citation_target(wire) == expected, wire


def test_fieldless_kinds_read_as_one_shared_value_whatever_else_they_hold() -> None:
    for kind, expected in (("analysis", AnalysisTarget()), ("portfolio", PortfolioTarget())):
        first = parse_citation_target({"kind": kind})
        assert first == expected
        assert expected.to_wire() == {"kind": kind}
        # Other kinds' fields, whatever their value, are extras here.
        noisy = {"kind": kind, "url": "javascript:x", "ticker": 1, "accountId": None, "accounts": 3}
        # One value for every row, as None is: a long history adds no object per row for it.
        assert parse_citation_target(noisy) is first


@PROPERTY
@given(canonical_wire_targets, extra_fields, json_like)
def test_only_the_kinds_own_fields_matter_and_the_input_is_left_alone(
    wire: dict[str, Any], extras: dict[str, Any], noise: Any
) -> None:
    before = copy.deepcopy(wire)
    expected = parse_citation_target(wire)
    assert wire == before
    assert expected is not None
    # Unknown fields, and another kind's fields whatever their value, are ignored...
    assert parse_citation_target({**extras, **wire}) == expected
    for key in set(REAL_KEYS) - OWN_FIELDS[wire["kind"]] - {"kind"}:
        assert parse_citation_target({**wire, key: noise}) == expected, key
    if wire["kind"] == "accounts":  # ...also inside the entries of `accounts`.
        noisy = {**wire, "accounts": [{**extras, **e} for e in wire["accounts"]]}
        assert parse_citation_target(noisy) == expected
    # Changing the wire dict afterwards does not change the target.
    snapshot = expected.to_wire()
    for value in wire.values():
        if isinstance(value, list):
            value.clear()
    wire.clear()
    assert expected.to_wire() == snapshot


@FUZZ
@given(any_target_value)
def test_never_raises_over_json_like_values(value: Any) -> None:
    result = parse_citation_target(value)
    # Not just "no exception": the result is a target of one of the nine kinds, or None.
    assert result is None or result.kind in KINDS


def test_fuzz_strategy_generates_lone_surrogates() -> None:
    # The property above is only as good as its input: its text holds lone surrogates.
    found = find(any_char, lambda c: ord(c) in SURROGATES, settings=settings(max_examples=20_000))
    assert ord(found) in SURROGATES


def _nest(depth: int, leaf: object, key: str | None = None) -> object:
    """`leaf` in `depth` lists (or dicts of `key`), built by a loop, not by recursion."""
    for _ in range(depth):
        leaf = [leaf] if key is None else {key: leaf}
    return leaf


DEPTH = 20_000  # well past the interpreter's recursion limit, and past pydantic's


def test_deeply_nested_value_at_each_field_and_inside_accounts() -> None:
    for key in REAL_KEYS:
        # Built once per shape for every kind (the parser must not change them).
        shapes = (_nest(DEPTH, None), _nest(DEPTH, "web", key))
        for kind in KINDS:
            expected: CitationTarget | None
            if key == "kind" or (key in OWN_FIELDS[kind] and key != "provider"):
                expected = None  # the field the kind needs is not what it must be
            elif key == "provider" and kind == "account":
                expected = AccountTarget(ID, None)  # not a provider: the account is kept
            else:
                expected = parse_citation_target(VALID[kind])  # another kind's: an extra
                assert expected is not None
            for nested in shapes:
                assert parse_citation_target({**VALID[kind], key: nested}) == expected, (key, kind)
    entry_id = {"accountId": _nest(DEPTH, ID, "accountId"), "provider": "plaid"}
    entry_provider = {"accountId": ID, "provider": _nest(DEPTH, "plaid")}
    assert parse_citation_target({"kind": "accounts", "accounts": [entry_id]}) is None
    assert parse_citation_target({"kind": "accounts", "accounts": [_nest(DEPTH, None)]}) is None
    # A nested provider is not a provider: the account is kept, its provider is None.
    assert parse_citation_target(
        {"kind": "accounts", "accounts": [entry_provider]}
    ) == AccountsTarget((AccountRef(ID, None),))
    # The whole target nested inside itself is still just a value of a wrong type.
    assert parse_citation_target(_nest(DEPTH, [], "accounts")) is None
    assert parse_citation_target(_nest(DEPTH, {"kind": "portfolio"})) is None


def test_large_values() -> None:
    entries = [{"accountId": f"acct-{i:012d}-x", "provider": "plaid"} for i in range(10_000)]
    result = parse_citation_target({"kind": "accounts", "accounts": entries})
    assert isinstance(result, AccountsTarget)
    assert len(result.accounts) == 10_000
    assert result.accounts[-1] == AccountRef("acct-000000009999-x", "plaid")
    # One bad entry at the very end voids all of them.
    for bad in ({"accountId": ""}, {"provider": "plaid"}, None, "acct", {"accountId": 7}):
        assert parse_citation_target({"kind": "accounts", "accounts": [*entries, bad]}) is None
    big = "A" * 1_000_000
    assert parse_citation_target({"kind": "market_data", "ticker": big}) == MarketDataTarget(big)
    url = "https://example.com/" + big
    assert parse_citation_target({"kind": "web", "url": url}) == WebTarget(url)
    assert parse_citation_target({"kind": "web", "url": url + " "}) is None
    assert parse_citation_target({"kind": big}) is None
    many: dict[str, object] = {f"k{i}": i for i in range(50_000)}
    many.update({"kind": "account", "accountId": ID, "provider": "manual"})
    assert parse_citation_target(many) == AccountTarget(ID, "manual")


class _RecursionDict(dict):  # type: ignore[type-arg]
    def get(self, *args: object, **kwargs: object) -> Any:
        return self.get(*args, **kwargs)


class _Str(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class _WeirdGetDict(dict):  # type: ignore[type-arg]
    """`get` answers with a str subclass that equals anything."""

    def get(self, key: object, default: object = None) -> Any:
        return _Str(str(dict.get(self, key, default)))


class _HostileKey:
    """A key that collides with "kind" and raises once the dict is built."""

    armed = False

    def __hash__(self) -> int:
        return hash("kind")

    def __eq__(self, other: object) -> bool:
        if _HostileKey.armed:
            raise RuntimeError("hostile key")
        return False


def test_hostile_mappings_and_strings_give_none() -> None:
    for kind, fields in [("web", {"url": "https://e.com"}), ("account", {"accountId": ID})]:
        assert parse_citation_target(RaisingDict(kind=kind, **fields)) is None, kind
    assert parse_citation_target(RaisingDict(kind="portfolio")) is None
    hostile_entry = RaisingDict(accountId=ID, provider="plaid")
    assert parse_citation_target({"kind": "accounts", "accounts": [hostile_entry]}) is None
    assert parse_citation_target(_RecursionDict(kind="portfolio")) is None
    # Values that only pretend to be the right string are not trusted.
    for value in (
        _WeirdGetDict(kind="web", url="https://example.com"),
        _WeirdGetDict(kind="market_data", ticker="AAPL"),
        _WeirdGetDict(kind="account", accountId=ID),
    ):
        result = parse_citation_target(value)
        assert result is None or all(type(v) is str for v in result.to_wire().values())
    assert parse_citation_target({"kind": _Str("portfolio")}) is None
    keyed = {_HostileKey(): 1, "kind": "web", "url": "https://example.com"}
    _HostileKey.armed = True
    try:
        assert parse_citation_target(keyed) is None
    finally:
        _HostileKey.armed = False
