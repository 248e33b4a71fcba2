"""Target values: wire round trip, equality and hashing, immutability, attribute names."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given

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

from .strategies import KINDS, PROPERTY, canonical_wire_targets, targets

ID = "acc_9f8e7d6c5b4a3210"


@PROPERTY
@given(targets)
def test_parse_of_to_wire_gives_an_equal_target(target: CitationTarget) -> None:
    assert parse_citation_target(target.to_wire()) == target


@PROPERTY
@given(targets)
def test_to_wire_survives_json(target: CitationTarget) -> None:
    # What the server sends is JSON: the wire form must be JSON as it is.
    wire = target.to_wire()
    text = json.dumps(wire, allow_nan=False)
    assert json.loads(text) == wire
    assert parse_citation_target(json.loads(text)) == target


@PROPERTY
@given(canonical_wire_targets)
def test_to_wire_of_parse_gives_exactly_the_wire_dict(wire: dict[str, Any]) -> None:
    target = parse_citation_target(copy.deepcopy(wire))
    assert target is not None
    out = target.to_wire()
    assert out == wire
    assert out["kind"] == target.kind
    # A fresh dict each time: a caller may change it without touching the target.
    out["kind"] = "changed"
    assert target.to_wire() == wire


@PROPERTY
@given(targets)
def test_equal_targets_hash_equal(target: CitationTarget) -> None:
    twin = parse_citation_target(copy.deepcopy(target.to_wire()))
    assert twin == target
    assert hash(twin) == hash(target)
    assert {target: "x"}[twin] == "x"
    assert len({target, twin}) == 1


@PROPERTY
@given(targets, targets)
def test_targets_are_equal_exactly_when_their_wire_forms_are(
    a: CitationTarget, b: CitationTarget
) -> None:
    assert (a == b) == (a.to_wire() == b.to_wire())


def test_different_targets_are_not_equal() -> None:
    cases: list[tuple[CitationTarget, CitationTarget]] = [
        (WebTarget("https://a.example"), TaxReferenceTarget("https://a.example")),
        (TaxReferenceTarget(None), CardDocumentTarget(None)),
        (CardDocumentTarget(None), MortgageReferenceTarget(None)),
        (AnalysisTarget(), PortfolioTarget()),
        (AccountTarget(ID, "plaid"), AccountTarget(ID, "manual")),
        (AccountTarget(ID, "plaid"), AccountTarget(ID, None)),
        (AccountTarget(ID), AccountsTarget((AccountRef(ID),))),
        (
            AccountsTarget((AccountRef(ID), AccountRef("b" * 16))),
            AccountsTarget((AccountRef("b" * 16), AccountRef(ID))),
        ),
    ]
    for case in cases:
        a, b = case
        assert a != b, case
        assert len({a, b}) == 2, case


@PROPERTY
@given(targets)
def test_targets_are_frozen(target: CitationTarget) -> None:
    before = target.to_wire()
    attributes = ("url", "ticker", "account_id", "provider", "accounts")
    fields = [name for name in attributes if hasattr(target, name)]
    for name in fields:
        with pytest.raises(AttributeError):
            setattr(target, name, "https://changed.example")
        with pytest.raises(AttributeError):
            delattr(target, name)
    # Names that are not fields cannot be set either. (A frozen dataclass with
    # slots raises TypeError here rather than FrozenInstanceError: a CPython quirk.)
    for name in ["kind", "url", "ticker", "account_id", "provider", "accounts", "other"]:
        if name not in fields:
            with pytest.raises((AttributeError, TypeError)):
                setattr(target, name, "https://changed.example")
    assert target.to_wire() == before
    assert parse_citation_target(before) == target


def test_account_refs_are_frozen_and_hashable() -> None:
    ref = AccountRef(ID, "snaptrade")
    with pytest.raises(AttributeError):
        ref.provider = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        ref.account_id = "other"  # type: ignore[misc]
    assert ref == AccountRef(ID, "snaptrade")
    assert hash(ref) == hash(AccountRef(ID, "snaptrade"))
    assert ref.to_wire() == {"accountId": ID, "provider": "snaptrade"}


def test_accounts_is_a_tuple_of_refs() -> None:
    target = parse_citation_target(
        {"kind": "accounts", "accounts": [{"accountId": ID, "provider": "plaid"}]}
    )
    assert isinstance(target, AccountsTarget)
    assert isinstance(target.accounts, tuple)
    assert all(isinstance(ref, AccountRef) for ref in target.accounts)
    hash(target)  # an immutable container of immutable refs


def test_attributes_are_snake_case() -> None:
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"kind": "web", "url": "https://e.example/"}, {"url": "https://e.example/"}),
        ({"kind": "tax_reference", "url": None}, {"url": None}),
        ({"kind": "card_document", "url": "https://c.example"}, {"url": "https://c.example"}),
        ({"kind": "mortgage_reference", "url": None}, {"url": None}),
        ({"kind": "market_data", "ticker": "AAPL"}, {"ticker": "AAPL"}),
        ({"kind": "analysis"}, {}),
        (
            {"kind": "account", "accountId": ID, "provider": "manual"},
            {"account_id": ID, "provider": "manual"},
        ),
        ({"kind": "portfolio"}, {}),
    ]
    for case in cases:
        wire, attributes = case
        target = parse_citation_target(wire)
        assert target is not None, case
        assert target.kind == wire["kind"], case
        for name, value in attributes.items():
            assert getattr(target, name) == value, case
        assert not hasattr(target, "accountId"), case


def test_accounts_attributes() -> None:
    target = parse_citation_target(
        {
            "kind": "accounts",
            "accounts": [{"accountId": ID, "provider": "plaid"}, {"accountId": "x" * 20}],
        }
    )
    assert isinstance(target, AccountsTarget)
    assert target.kind == "accounts"
    assert [(r.account_id, r.provider) for r in target.accounts] == [
        (ID, "plaid"),
        ("x" * 20, None),
    ]


def test_every_kind_has_a_target_class() -> None:
    classes: list[type[CitationTarget]] = [
        WebTarget,
        TaxReferenceTarget,
        CardDocumentTarget,
        MortgageReferenceTarget,
        MarketDataTarget,
        AnalysisTarget,
        AccountTarget,
        AccountsTarget,
        PortfolioTarget,
    ]
    assert sorted(cls.kind for cls in classes) == sorted(KINDS)


def test_fieldless_targets_are_values() -> None:
    assert AnalysisTarget() == AnalysisTarget()
    assert hash(PortfolioTarget()) == hash(PortfolioTarget())
    assert AnalysisTarget().to_wire() == {"kind": "analysis"}
    assert PortfolioTarget().to_wire() == {"kind": "portfolio"}


@pytest.mark.parametrize("target", [AnalysisTarget(), PortfolioTarget()], ids=lambda t: t.kind)
def test_a_target_with_no_fields_is_read_as_one_shared_value(target: CitationTarget) -> None:
    # One value for every row, as None is: a long history adds no object per row for it.
    first = parse_citation_target({"kind": target.kind})
    again = parse_citation_target({"kind": target.kind, "note": "an unknown field"})
    assert first is again
    assert first == target  # and equal to one built by hand
