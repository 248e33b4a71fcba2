"""`parse_citation_target` never raises: any value, deep nesting, huge sizes, hostile dicts."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    CitationTarget,
    MarketDataTarget,
    WebTarget,
    parse_citation_target,
)

from ._parse_cases import ID, OWN_FIELDS, VALID
from .strategies import FUZZ, KINDS, REAL_KEYS, SURROGATES, any_target_value, json_like

# --------------------------------------------------------------------------- never raises


@FUZZ
@given(any_target_value)
def test_never_raises_over_json_like_values(value: Any) -> None:
    result = parse_citation_target(value)
    # Not just "no exception": the result is a target of one of the nine kinds, or None.
    assert result is None or result.kind in KINDS


def test_fuzz_strategy_generates_lone_surrogates() -> None:
    # The never-raises property is only as good as its input: make sure the text
    # it is fed really holds lone surrogates, which many strategies leave out.
    from hypothesis import find

    def has_surrogate(value: Any) -> bool:
        if isinstance(value, str):
            return any(ord(c) in SURROGATES for c in value)
        if isinstance(value, list):
            return any(has_surrogate(v) for v in value)
        if isinstance(value, dict):
            return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
        return False

    found = find(json_like, has_surrogate)
    assert has_surrogate(found)


NOT_JSON_OBJECTS: list[object] = [
    None,
    True,
    0,
    -1,
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "web",
    '{"kind": "web", "url": "https://example.com"}',
    "\ud800",
    b'{"kind": "portfolio"}',
    [],
    [{"kind": "portfolio"}],
    ("kind", "portfolio"),
    {("kind",): "portfolio"},
    object(),
    {"kind": "portfolio"}.items(),
]


def test_not_a_json_object_gives_none() -> None:
    for value in NOT_JSON_OBJECTS:
        assert parse_citation_target(value) is None, value


# Built iteratively, not by recursion.
def _deep_list(depth: int, leaf: object = None) -> object:
    value: object = leaf
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int, key: str = "kind", leaf: object = "web") -> object:
    value: object = leaf
    for _ in range(depth):
        value = {key: value}
    return value


def test_deeply_nested_value_at_each_field() -> None:
    for depth in (10_000, 100_000):
        for key in REAL_KEYS:
            # Built once per shape for every kind (the parser must not change them).
            shapes = (_deep_list(depth), _deep_dict(depth, key=key))
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
                    wire = {**VALID[kind], key: nested}
                    assert parse_citation_target(wire) == expected, (depth, key, kind)


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_deeply_nested_inside_accounts(depth: int) -> None:
    entry_id = {"accountId": _deep_dict(depth, "accountId", ID), "provider": "plaid"}
    entry_provider = {"accountId": ID, "provider": _deep_list(depth, "plaid")}
    assert parse_citation_target({"kind": "accounts", "accounts": [entry_id]}) is None
    assert parse_citation_target({"kind": "accounts", "accounts": [_deep_list(depth)]}) is None
    # A nested provider is not a provider: the account is kept, its provider is None.
    assert parse_citation_target(
        {"kind": "accounts", "accounts": [entry_provider]}
    ) == AccountsTarget((AccountRef(ID, None),))
    # The whole target nested inside itself is still just a value of a wrong type.
    assert parse_citation_target(_deep_dict(depth, "accounts", [])) is None
    assert parse_citation_target(_deep_list(depth, {"kind": "portfolio"})) is None


def test_very_large_accounts_list() -> None:
    entries = [{"accountId": f"acct-{i:012d}-x", "provider": "plaid"} for i in range(100_000)]
    result = parse_citation_target({"kind": "accounts", "accounts": entries})
    assert isinstance(result, AccountsTarget)
    assert len(result.accounts) == 100_000
    assert result.accounts[0] == AccountRef("acct-000000000000-x", "plaid")
    assert result.accounts[-1] == AccountRef("acct-000000099999-x", "plaid")

    # One bad entry at the very end voids all of them.
    for bad in ({"accountId": ""}, {"provider": "plaid"}, None, "acct", {"accountId": 7}):
        entries_bad = [*entries, bad]
        assert parse_citation_target({"kind": "accounts", "accounts": entries_bad}) is None


def test_very_large_strings() -> None:
    big = "A" * 5_000_000
    assert parse_citation_target({"kind": "market_data", "ticker": big}) == MarketDataTarget(big)
    url = "https://example.com/" + "a" * 5_000_000
    assert parse_citation_target({"kind": "web", "url": url}) == WebTarget(url)
    assert parse_citation_target({"kind": "web", "url": url + " "}) is None
    assert parse_citation_target({"kind": big}) is None


def test_many_extra_keys() -> None:
    value: dict[str, object] = {f"k{i}": i for i in range(200_000)}
    value.update({"kind": "account", "accountId": ID, "provider": "manual"})
    assert parse_citation_target(value) == AccountTarget(ID, "manual")


class _RaisingDict(dict):  # type: ignore[type-arg]
    """A dict whose every read raises (get, [], items, keys, iteration, len, contains)."""

    def _boom(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("hostile mapping")

    get = __getitem__ = items = keys = values = __iter__ = __len__ = __contains__ = _boom


class _RecursionDict(dict):  # type: ignore[type-arg]
    def get(self, *args: object, **kwargs: object) -> Any:
        return self.get(*args, **kwargs)


class _WeirdGetDict(dict):  # type: ignore[type-arg]
    """`get` answers with str subclasses and objects that mimic strings."""

    class _Str(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    def get(self, key: object, default: object = None) -> Any:
        return self._Str(str(dict.get(self, key, default)))


class _HostileKey:
    """A key that collides with "kind" and raises once the dict is built."""

    armed = False

    def __hash__(self) -> int:
        return hash("kind")

    def __eq__(self, other: object) -> bool:
        if _HostileKey.armed:
            raise RuntimeError("hostile key")
        return False


def test_dict_subclass_whose_reads_raise() -> None:
    for kind, fields in [
        ("web", {"url": "https://example.com"}),
        ("account", {"accountId": ID}),
        ("portfolio", {}),
    ]:
        assert parse_citation_target(_RaisingDict(kind=kind, **fields)) is None
    # ...also as an entry of `accounts`, or as the whole entry list's element.
    hostile_entry = _RaisingDict(accountId=ID, provider="plaid")
    assert parse_citation_target({"kind": "accounts", "accounts": [hostile_entry]}) is None


def test_dict_subclass_whose_get_recurses() -> None:
    assert parse_citation_target(_RecursionDict(kind="portfolio")) is None


def test_dict_subclass_whose_get_returns_str_subclasses() -> None:
    # Values that only pretend to be the right string are not trusted.
    for value in (
        _WeirdGetDict(kind="web", url="https://example.com"),
        _WeirdGetDict(kind="market_data", ticker="AAPL"),
        _WeirdGetDict(kind="account", accountId=ID),
    ):
        result = parse_citation_target(value)
        assert result is None or all(type(v) is str for v in result.to_wire().values())


def test_key_whose_comparison_raises() -> None:
    value = {_HostileKey(): 1, "kind": "web", "url": "https://example.com"}
    _HostileKey.armed = True
    try:
        assert parse_citation_target(value) is None
    finally:
        _HostileKey.armed = False


def test_str_subclass_kind_is_not_a_kind() -> None:
    class Kind(str):
        pass

    assert parse_citation_target({"kind": Kind("portfolio")}) is None
