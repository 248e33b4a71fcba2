"""`Citation`, `InlineCitation` and `load_citations`: wire rows in, targets through the parser."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client.citations import (
    AccountsTarget,
    AccountTarget,
    Citation,
    CitationRows,
    InlineCitation,
    MarketDataTarget,
    RowError,
    WebTarget,
    load_citations,
    parse_citation_target,
)

from .strategies import (
    PROPERTY,
    any_target_value,
    bad_citation_rows,
    canonical_wire_targets,
    citation_rows,
    json_like,
    targets,
)

ID = "acc_9f8e7d6c5b4a3210"
MODELS = [Citation, InlineCitation]
WIRE = {"include_provider": True}  # the full wire form: a dump asks for the provider by name

Build = Callable[[type[Citation], dict[str, Any]], Citation]


def _validate(model: type[Citation], row: dict[str, Any]) -> Citation:
    return model.model_validate(row)


def _validate_json(model: type[Citation], row: dict[str, Any]) -> Citation:
    return model.model_validate_json(json.dumps(row))


def _validate_json_bytes(model: type[Citation], row: dict[str, Any]) -> Citation:
    return model.model_validate_json(json.dumps(row).encode())


def _construct(model: type[Citation], row: dict[str, Any]) -> Citation:
    return model(**row)


BUILDERS: tuple[Build, ...] = (_validate, _validate_json, _validate_json_bytes, _construct)


def _every_build(row: dict[str, Any]) -> list[Citation]:
    """The row built as each model, in every way: from a dict, JSON text, JSON bytes, kwargs."""
    return [build(model, copy.deepcopy(row)) for model in MODELS for build in BUILDERS]


def _row(target: object = ..., **fields: object) -> dict[str, Any]:
    row: dict[str, Any] = {
        "type": "search_result_location",
        "source": "silvia://your-account/checking",
        "title": "Checking",
        "cited_text": "Balance: $1,234.00",
        "search_result_index": 2,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    if target is not ...:
        row["target"] = target
    row.update(fields)
    return row


# --------------------------------------------------------------------------- building


def test_every_way_of_building_parses_the_target() -> None:
    wire = {"kind": "account", "accountId": ID, "provider": "plaid"}
    built = _every_build(_row(wire))
    assert len(built) == 8
    assert {type(citation) for citation in built} == set(MODELS)
    for citation in built:
        assert citation.target == AccountTarget(ID, "plaid")
        assert citation.target == parse_citation_target(wire)


MALFORMED_TARGETS: list[object] = [
    {"kind": "web", "url": "javascript:alert(1)"},
    {"kind": "web"},
    {"kind": "telepathy"},
    {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": 7}]},
    {"kind": "market_data", "ticker": ""},
    {"url": "https://example.com"},
    "web",
    ["account"],
    7,
    None,
]


def test_malformed_target_becomes_none_and_the_rest_is_kept() -> None:
    for target in MALFORMED_TARGETS:
        for citation in _every_build(_row(target)):
            assert citation.target is None, (target, citation)
            assert citation.source == "silvia://your-account/checking"
            assert citation.title == "Checking"
            assert citation.cited_text == "Balance: $1,234.00"
            extras = citation.model_extra or {}
            assert extras["search_result_index"] == 2
            assert extras["type"] == "search_result_location"


def test_row_without_target_has_none() -> None:
    for citation in _every_build({"source": "https://example.com/a", "title": "A"}):
        assert citation.target is None
        assert citation.title == "A"


def test_title_and_cited_text_are_optional() -> None:
    for row in (
        {"source": "silvia://your-portfolio"},
        {"source": "s", "title": None, "cited_text": None},
    ):
        for citation in _every_build(row):
            assert (citation.title, citation.cited_text) == (None, None), citation


def test_unknown_fields_are_kept_and_dumped_back() -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID, "provider": "manual"}]}
    row = _row(wire, future_field={"nested": [1, 2, {"x": None}]}, start_char_index=12)
    for citation in _every_build(row):
        dumped = citation.model_dump(context=WIRE)
        for key, value in row.items():
            assert dumped[key] == value, (key, citation)
        assert dumped["target"] == wire  # the target comes back in its wire form
        assert json.loads(citation.model_dump_json(context=WIRE))["target"] == wire
        assert citation.model_dump(mode="json", context=WIRE)["target"] == wire


@PROPERTY
@given(st.sampled_from(MODELS), citation_rows())
def test_model_dump_gives_the_row_back_with_the_parsed_target(
    model: type[Citation], row: dict[str, Any]
) -> None:
    citation = model.model_validate(copy.deepcopy(row))
    dumped = citation.model_dump(context=WIRE)
    target = parse_citation_target(row.get("target"))
    assert citation.target == target
    assert dumped["target"] == (None if target is None else target.to_wire())
    for key, value in row.items():
        if key != "target":
            assert dumped[key] == value
    # ...and the dump reads back as the same citation.
    assert model.model_validate(dumped) == citation


@PROPERTY
@given(st.sampled_from(MODELS), citation_rows(target=canonical_wire_targets))
def test_json_round_trip(model: type[Citation], row: dict[str, Any]) -> None:
    # Strings with lone surrogates are not JSON the server can send; keep to real JSON.
    try:
        text = json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    citation = model.model_validate_json(text)
    assert citation == model.model_validate(row)
    assert model.model_validate_json(citation.model_dump_json(context=WIRE)) == citation


@PROPERTY
@given(target=targets)
def test_a_typed_target_given_by_hand_is_kept(target: Any) -> None:
    # Building a citation in code (a test, the reference server) with a target
    # value must keep it: the parser reads wire dicts, a target is already read.
    for model in MODELS:
        assert model(source="s", target=target).target == target
        assert model.model_validate({"source": "s", "target": target}).target == target


def test_citations_are_frozen() -> None:
    citation = Citation.model_validate(_row({"kind": "portfolio"}))
    with pytest.raises(ValidationError):
        citation.target = None
    with pytest.raises(ValidationError):
        citation.source = "other"


def test_inline_citation_keeps_its_offset() -> None:
    citation = InlineCitation.model_validate(_row({"kind": "portfolio"}, offset=42))
    assert citation.offset == 42
    assert InlineCitation.model_validate(_row()).offset is None


def test_rows_that_are_not_citations_raise_validation_error() -> None:
    for row in (
        {},
        {"title": "no source"},
        {"source": None},
        {"source": 7},
        {"source": ["s"]},
        {"source": "s", "title": 7},
        {"source": "s", "cited_text": {"text": "x"}},
    ):
        for model in MODELS:
            with pytest.raises(ValidationError):
                model.model_validate(row)


# --------------------------------------------------------------------------- load_citations


def test_load_keeps_good_rows_and_reports_bad_ones() -> None:
    for model in MODELS:
        _load_keeps_good_rows_and_reports_bad_ones(model)


def _load_keeps_good_rows_and_reports_bad_ones(model: type[Citation]) -> None:
    rows = [
        _row({"kind": "market_data", "ticker": "AAPL"}),
        {"title": "no source"},
        _row({"kind": "web", "url": "javascript:x"}),  # a bad target is not a bad row
        "not a row",
        _row(),
        None,
    ]
    result = load_citations(rows, model)
    assert isinstance(result, CitationRows)
    assert [c.target for c in result.citations] == [MarketDataTarget("AAPL"), None, None]
    assert all(type(c) is model for c in result.citations)
    assert [e.index for e in result.errors] == [1, 3, 5]
    assert all(isinstance(e, RowError) and e.reason for e in result.errors)
    assert [e.raw for e in result.errors] == [rows[1], rows[3], rows[5]]


@PROPERTY
@given(
    st.lists(
        st.one_of(
            citation_rows().map(lambda row: (True, row)),
            bad_citation_rows.map(lambda row: (False, row)),
        ),
        max_size=12,
    ),
    st.sampled_from(MODELS),
)
def test_load_splits_good_and_bad_rows_by_index(
    labelled: list[tuple[bool, Any]], model: type[Citation]
) -> None:
    rows = [row for _, row in labelled]
    good = [i for i, (ok, _) in enumerate(labelled) if ok]
    result = load_citations(copy.deepcopy(rows), model)
    assert [e.index for e in result.errors] == [i for i, (ok, _) in enumerate(labelled) if not ok]
    assert result.citations == tuple(model.model_validate(rows[i]) for i in good)
    for index, citation in zip(good, result.citations, strict=True):
        assert citation.source == rows[index]["source"]
        assert citation.target == parse_citation_target(rows[index].get("target"))


@PROPERTY
@given(st.one_of(st.lists(json_like, max_size=10), json_like))
def test_load_never_raises_for_junk(rows: Any) -> None:
    result = load_citations(rows, Citation)
    if isinstance(rows, list):
        assert len(result.citations) + len(result.errors) == len(rows)
        indexes = [e.index for e in result.errors]
        assert indexes == sorted(set(indexes))
        assert all(0 <= i < len(rows) for i in indexes)
    elif rows is None:
        assert result == CitationRows(())
    else:
        assert result.citations == ()
        assert len(result.errors) == 1


@PROPERTY
@given(
    st.lists(st.fixed_dictionaries({"source": st.text()}, optional={"target": any_target_value}))
)
def test_load_never_fails_a_row_for_its_target(rows: list[dict[str, Any]]) -> None:
    result = load_citations(rows, InlineCitation)
    assert result.errors == ()
    assert len(result.citations) == len(rows)


def test_load_none_is_empty() -> None:
    result = load_citations(None, Citation)
    assert result.citations == ()
    assert result.errors == ()


def test_load_non_list_is_one_error() -> None:
    for rows in ({"source": "s"}, "rows", 3, (), ({"source": "s"},), b"[]"):
        result = load_citations(rows, Citation)
        assert result.citations == (), rows
        assert len(result.errors) == 1, rows
        assert result.errors[0].reason


def test_load_says_what_is_wrong_with_each_bad_row_and_logs_the_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    load = load_citations
    rows = [
        {"title": "no source"},
        "not a row",
        _row(),
        {"source": 1, "title": 2},
        _row(offset="a"),
        {"source": "s", "cited_text": ["x"]},
    ]
    with caplog.at_level(logging.WARNING, logger="silvia_client"):
        result = load(rows, InlineCitation)
    assert [(e.index, e.reason, e.raw) for e in result.errors] == [
        (0, "source: missing", rows[0]),
        (1, "row: model_type", "not a row"),
        (3, "source: string_type; title: string_type", rows[3]),
        (4, "offset: int_type", rows[4]),
        (5, "cited_text: string_type", rows[5]),
    ]
    assert [r.getMessage() for r in caplog.records] == ["skipped 5 malformed citation row(s)"]
    assert load({"source": "s"}, Citation).errors == (RowError(-1, "expected a list, got dict"),)


def test_load_empty_list() -> None:
    assert load_citations([], Citation) == CitationRows(())


def test_load_a_large_list() -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID}] * 10}
    rows: list[Any] = [_row(wire) for _ in range(20_000)]
    rows.append({"nope": 1})
    result = load_citations(rows, Citation)
    assert len(result.citations) == 20_000
    assert isinstance(result.citations[-1].target, AccountsTarget)
    assert [e.index for e in result.errors] == [20_000]


def test_load_rows_with_deeply_nested_extras() -> None:
    deep: object = None
    for _ in range(50_000):
        deep = [deep]
    rows = [_row({"kind": "web", "url": "https://e.example", "deep": deep}, deep=deep)]
    result = load_citations(rows, Citation)
    assert result.errors == ()
    assert result.citations[0].target == WebTarget("https://e.example")


class _HostileRow(dict):  # type: ignore[type-arg]
    def _boom(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("hostile row")

    get = __getitem__ = items = keys = values = __iter__ = __len__ = __contains__ = _boom


def test_load_reports_a_row_whose_mapping_raises() -> None:
    # "Never fails the whole list for one bad row": a row that cannot even be read
    # is a bad row like any other; the good rows around it are kept.
    rows = [_row(), _HostileRow(source="s"), _row()]
    result = load_citations(rows, Citation)
    assert len(result.citations) == 2
    # The reason names the error's type and nothing it says; the row is kept as sent.
    (error,) = result.errors
    assert (error.index, error.reason) == (1, "unreadable row: RuntimeError")
    assert error.raw is rows[1]


class _QuietRow(dict):  # type: ignore[type-arg]
    """A dict subclass with nothing odd about it: a row like any other."""


def test_a_dict_subclass_row_reads_as_the_same_plain_row() -> None:
    row = _row({"kind": "web", "url": "https://e.example"}, offset=3)
    for model in MODELS:
        result = load_citations([_QuietRow(row)], model)
        assert result.errors == ()
        assert result.citations == load_citations([row], model).citations


def test_a_row_shows_in_a_notebook_as_the_display_views_draw_it() -> None:
    from silvia_client.display import citation_html, citation_markdown

    row = InlineCitation(source="silvia://web", title="Rates <today>", offset=0)
    assert row._repr_html_() == citation_html(row)
    assert row._repr_markdown_() == citation_markdown(row)
    assert "Rates &lt;today&gt;" in row._repr_html_()


class _SaysOtherwise(dict):  # type: ignore[type-arg]
    """A dict subclass whose `get` and `items` say something other than what it holds."""

    def get(self, key: object, default: object = None) -> object:
        return "said otherwise"

    def items(self) -> Any:
        return [("source", "said otherwise"), ("title", "said otherwise")]


def test_a_dict_subclass_row_reads_as_dict_reads_it() -> None:
    # As `dict()` copies it (what it holds), whichever methods pydantic-core would call:
    # older pydantic-core reads a dict subclass's storage, newer its `get` and `items`.
    row = _SaysOtherwise(_row({"kind": "web", "url": "https://e.example"}, offset=3))
    for model in MODELS:
        result = load_citations([row], model)
        assert result.errors == ()
        assert result.citations == load_citations([dict(row)], model).citations
        assert (result.citations[0].source, result.citations[0].title) == (
            "silvia://your-account/checking",
            "Checking",
        )
