"""Target values: wire round trip, equality and hashing, immutability, attribute names."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    parse_citation_target,
)

from .strategies import ID, PROPERTY, canonical_wire_targets, targets

ATTRIBUTES = ("url", "ticker", "account_id", "provider", "accounts")


@PROPERTY
@given(canonical_wire_targets)
def test_to_wire_of_parse_gives_exactly_the_wire_dict_and_snake_case_attributes(
    wire: dict[str, Any],
) -> None:
    target = parse_citation_target(copy.deepcopy(wire))
    assert target is not None
    out = target.to_wire()
    assert out == wire
    assert target.kind == wire["kind"]
    # A fresh dict each time: a caller may change it without touching the target.
    out["kind"] = "changed"
    assert target.to_wire() == wire
    # The wire's camelCase names are snake_case attributes.
    names = {"url": "url", "ticker": "ticker", "accountId": "account_id", "provider": "provider"}
    for key in set(wire) & set(names):
        assert getattr(target, names[key]) == wire[key], key
    if isinstance(target, AccountsTarget):
        assert isinstance(target.accounts, tuple)
        assert [(r.account_id, r.provider) for r in target.accounts] == [
            (e["accountId"], e["provider"]) for e in wire["accounts"]
        ]
    assert not hasattr(target, "accountId")


DIFFERENT: list[tuple[CitationTarget, CitationTarget]] = [
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


@PROPERTY
@given(targets, targets)
@example(AnalysisTarget(), AnalysisTarget())
@example(PortfolioTarget(), PortfolioTarget())
def test_targets_are_equal_exactly_when_their_wire_forms_are(
    a: CitationTarget, b: CitationTarget
) -> None:
    assert (a == b) == (a.to_wire() == b.to_wire())
    assert (a == b) == (len({a, b}) == 1)
    for x, y in DIFFERENT:
        assert len({x, y}) == 2, (x, y)  # neither equal nor hashing as one


@PROPERTY
@given(targets)
def test_targets_are_frozen_and_read_back_from_their_wire_form(target: CitationTarget) -> None:
    before = target.to_wire()
    # What the server sends is JSON: the wire form must be JSON as it is.
    assert json.loads(json.dumps(before, allow_nan=False)) == before
    fields = [name for name in ATTRIBUTES if hasattr(target, name)]
    for name in fields:
        with pytest.raises(AttributeError):
            setattr(target, name, "https://changed.example")
        with pytest.raises(AttributeError):
            delattr(target, name)
    # Nor names that are not fields (TypeError: frozen with slots, a CPython quirk).
    for name in {"kind", *ATTRIBUTES, "other"} - set(fields):
        with pytest.raises((AttributeError, TypeError)):
            setattr(target, name, "https://changed.example")
    for ref in target.accounts if isinstance(target, AccountsTarget) else ():
        for name in ("account_id", "provider"):
            with pytest.raises(AttributeError):
                setattr(ref, name, None)
    assert target.to_wire() == before
    twin = parse_citation_target(before)
    assert twin == target
    assert hash(twin) == hash(target)
