"""`provider` names a vendor: readable for routing, never shown.

The robust check: whatever a user can see of an object whose provider is P
(repr, str, labels, links, error messages) is identical to what they see of the
same object with provider None. A substring search alone could be fooled by an
account id that happens to contain "manual". A dump holds no `provider` key at
any depth unless it is asked for by name.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import pprint
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    Citation,
    load_citations,
    parse_citation_target,
    resolve_citation,
)

from .strategies import (
    BASE,
    ID,
    ID2,
    MODELS,
    PROPERTY,
    PROVIDER_NAMES,
    account_bearing_targets,
    any_target_value,
    canonical_wire_targets,
    citation_rows,
    every_key,
)


def _with_provider(wire: Any, provider: str | None) -> Any:
    """A copy of a wire target (or a row holding one) with every provider set to `provider`."""
    wire = copy.deepcopy(wire)
    target: Any = wire.get("target", wire) if isinstance(wire, dict) else None
    holders = [target] if isinstance(target, dict) else []
    if holders and isinstance(target.get("accounts"), list):
        holders += [e for e in target["accounts"] if isinstance(e, dict)]
    for holder in holders:
        if "accountId" in holder:
            holder["provider"] = provider
    return wire


def _shown(value: Any) -> list[str]:
    """Everything a user could be shown of a value."""
    return [repr(value), str(value), f"{value}", f"{value!r}", pprint.pformat(value)]


def _shown_resolved(citation: Citation) -> list[Any]:
    out: list[Any] = []
    for web in ("", BASE):
        resolved = resolve_citation(citation, web_url=web)
        out += [resolved, *_shown(resolved), resolved.label]
        out += [(link.href, link.label) for link in resolved.links]
    return out


@PROPERTY
@given(
    st.sampled_from(MODELS),
    citation_rows(target=account_bearing_targets.map(lambda t: t.to_wire())),
    st.sampled_from(PROVIDER_NAMES),
)
def test_targets_rows_labels_and_links_hide_the_provider(
    model: type[Citation], row: dict[str, Any], provider: str
) -> None:
    with_p = model.model_validate(_with_provider(row, provider))
    without = model.model_validate(_with_provider(row, None))
    target, bare = with_p.target, without.target
    assert isinstance(target, (AccountTarget, AccountsTarget))
    assert isinstance(bare, (AccountTarget, AccountsTarget))
    assert target != bare  # they do differ, in the provider ...
    assert _shown(target) == _shown(bare)  # ... which is never shown
    assert _shown(with_p) == _shown(without)
    assert _shown_resolved(with_p) == _shown_resolved(without)
    refs = target.accounts if isinstance(target, AccountsTarget) else (target.ref,)
    bare_refs = bare.accounts if isinstance(bare, AccountsTarget) else (bare.ref,)
    for ref, ref_none in zip(refs, bare_refs, strict=True):
        assert ref.provider == provider  # still readable, for routing
        assert _shown(ref) == _shown(ref_none)


# JSON values (no NaN: a row must equal itself) whose objects often hold a `provider`.
_extra_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(PROVIDER_NAMES),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(("provider", "accountId", "x")), children, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def _rows_with_providers(draw: st.DrawFn) -> dict[str, Any]:
    """A row whose target, top-level extras and nested extras each may name a vendor."""
    row = draw(citation_rows(target=st.one_of(canonical_wire_targets, any_target_value)))
    row["provider"] = draw(st.sampled_from(PROVIDER_NAMES))  # an extra named `provider`
    vendor = draw(st.sampled_from(PROVIDER_NAMES))
    row["trace"] = {"steps": [draw(_extra_values), {"provider": vendor, "n": draw(_extra_values)}]}
    return row


@PROPERTY
@given(st.sampled_from(MODELS), _rows_with_providers())
def test_every_dump_leaves_every_provider_out_unless_asked_by_name(
    model: type[Citation], row: dict[str, Any]
) -> None:
    citation = model.model_validate(copy.deepcopy(row))
    rows = TypeAdapter(list[model])  # type: ignore[valid-type]  # a FastAPI response_model's
    dumps = [
        citation.model_dump(),
        citation.model_dump(mode="json"),
        citation.model_dump(context={"include_provider": False}),
        rows.dump_python([citation]),
        rows.dump_python([citation], mode="json"),
    ]
    # (A row with a lone surrogate has no JSON text: pydantic refuses to write it.)
    with contextlib.suppress(PydanticSerializationError):
        dumps += [json.loads(citation.model_dump_json()), json.loads(rows.dump_json([citation]))]
    for dumped in dumps:
        assert "provider" not in set(every_key(dumped))
    # Asked for by name, the row is the full wire form: every provider as it was sent.
    full = citation.model_dump(context={"include_provider": True})
    target = citation.target
    assert full["target"] == (None if target is None else target.to_wire())
    assert (full["provider"], full["trace"]) == (row["provider"], row["trace"])
    # Read back, a dump without providers is the same row with every provider None.
    again = model.model_validate(citation.model_dump())
    bare = None if target is None else _with_provider(target.to_wire(), None)
    assert again.target == parse_citation_target(bare)
    assert "provider" not in set(every_key(again.model_extra))
    assert again.model_dump() == citation.model_dump()


def test_an_extras_list_or_tuple_stays_one_without_its_providers() -> None:
    # A row built in code may hold a tuple: a python-mode dump keeps it one.
    for kind in (list, tuple):
        trace = kind(({"provider": "plaid", "n": 1}, "x"))
        citation = Citation.model_validate({"source": "s", "trace": trace})
        assert citation.model_dump()["trace"] == kind(({"n": 1}, "x")), kind
        assert citation.model_dump(context={"include_provider": True})["trace"] == trace


BAD_ROWS: list[dict[str, Any]] = [
    {"source": 7},
    {"title": "no source"},
    {"source": "s", "title": ["not", "a", "string"]},
    {"source": None, "cited_text": 3},
]
BUILD: dict[str, Any] = {
    "validate": lambda model, row: model.model_validate(row),
    "json": lambda model, row: model.model_validate_json(json.dumps(row)),
    "json-broken": lambda model, row: model.model_validate_json(json.dumps(row)[:-1]),
    "construct": lambda model, row: model(**row),
}
ACCOUNT_TARGETS: list[dict[str, Any]] = [
    {"kind": "account", "accountId": ID},
    {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": ID2}]},
    {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": 5}]},  # malformed
]


def _raise(model: type[Citation], how: str, row: dict[str, Any]) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        BUILD[how](model, row)
    return info.value


def test_validation_error_hides_the_provider() -> None:
    for model in MODELS:
        for how in BUILD:
            for bad in BAD_ROWS:
                for target in ACCOUNT_TARGETS:
                    row = {**bad, "target": target}
                    error_none = _raise(model, how, _with_provider(row, None))
                    for provider in PROVIDER_NAMES:
                        case = (model.__name__, how, bad, target, provider)
                        error = _raise(model, how, _with_provider(row, provider))
                        if how != "json-broken":  # (a JSON syntax error names its column)
                            assert str(error) == str(error_none), case
                            assert repr(error) == repr(error_none), case
                        assert provider not in str(error) + repr(error), case


def test_loading_rows_shows_no_provider_and_logs_no_target(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The comparisons of what is shown would pass for a repr that showed nothing at all.
    assert repr(AccountTarget(ID, "plaid")) != repr(AccountTarget(ID2, "plaid"))
    assert ID in repr(AccountTarget(ID, "plaid"))
    assert ID in repr(AccountsTarget((AccountRef(ID, "manual"),)))
    url = "https://secret-doc.example/path"
    for provider in PROVIDER_NAMES:
        targets: list[dict[str, Any]] = [
            {"kind": "account", "accountId": ID, "provider": provider},
            {"kind": "accounts", "accounts": [{"accountId": ID2, "provider": provider}]},
            {"kind": "accounts", "accounts": [{"accountId": ID2, "provider": provider}, 5]},
            {"kind": "web", "url": url},
            {"kind": "account", "accountId": "a\ud800b-lone-surrogate", "provider": provider},
        ]
        rows: list[Any] = ["junk", {"title": "no source", "target": targets[1]}]
        for target in targets:
            rows.append({"source": "silvia://your-account/x", "title": "X", "target": target})
            rows.append({"source": 7, "target": target})  # bad rows get logged about
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="silvia_client"):
            for model in MODELS:
                result = load_citations(rows, model)
                for citation in result.citations:
                    resolve_citation(citation)
                    resolve_citation(citation, web_url=BASE)
            for target in targets:
                parse_citation_target(target)
        # What a listing of the rows and their errors shows is what it shows without providers.
        without = load_citations([_with_provider(row, None) for row in rows], MODELS[-1])
        assert _shown(result) == _shown(without), provider
        # With ids that cannot hold the word, a plain search is safe too.
        shown = [*_shown(result), *(str(s) for c in result.citations for s in _shown_resolved(c))]
        assert not [text for text in shown if provider in text.lower()], provider
        assert len(result.errors) == 7
        for error, error_none in zip(result.errors, without.errors, strict=True):
            assert _shown(error) == _shown(error_none), provider
            assert provider not in repr(error) + error.reason
        assert caplog.records  # the loader had something to say
        secrets = (ID, ID2, url, provider, "a\ud800b")
        for record in caplog.records:
            message = record.getMessage()
            assert not any(secret in message for secret in secrets), message
            values = record.args.values() if isinstance(record.args, dict) else record.args or ()
            for value in values:
                assert isinstance(value, (str, int, float)), value
            assert record.exc_info is None or not any(
                secret in str(record.exc_info[1]) for secret in secrets
            )
