"""`Citation`, `InlineCitation` and `load_citations`: wire rows in, targets through the parser."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client.citations import (
    AccountsTarget,
    AccountTarget,
    Citation,
    CitationRows,
    InlineCitation,
    RowError,
    WebTarget,
    load_citations,
    parse_citation_target,
)

from .strategies import (
    ID,
    MODELS,
    PROPERTY,
    RaisingDict,
    bad_citation_rows,
    canonical_wire_targets,
    citation_rows,
    json_like,
    targets,
)

WIRE = {"include_provider": True}  # the full wire form: a dump asks for the provider by name


def _every_build(row: dict[str, Any]) -> list[Citation]:
    """The row built as each model, in every way: from a dict, JSON text, JSON bytes, kwargs."""
    text = json.dumps(row)
    return [
        built
        for model in MODELS
        for built in (
            model.model_validate(copy.deepcopy(row)),
            model.model_validate_json(text),
            model.model_validate_json(text.encode()),
            model(**copy.deepcopy(row)),
        )
    ]


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
    return row | fields


MALFORMED_TARGETS: list[object] = [
    {"kind": "web", "url": "javascript:alert(1)"},
    {"kind": "web"},
    {"kind": "telepathy"},
    {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": 7}]},
    {"kind": "market_data", "ticker": ""},
    *({"url": "https://example.com"}, "web", ["account"], 7, None, ...),
]


def test_every_way_of_building_parses_the_target_and_keeps_the_rest() -> None:
    wire = {"kind": "account", "accountId": ID, "provider": "plaid"}
    row = _row(wire, future_field={"nested": [1, 2, {"x": None}]}, start_char_index=12)
    built = _every_build(row)
    assert [type(citation) for citation in built] == [Citation] * 4 + [InlineCitation] * 4
    for citation in built:
        assert citation.target == AccountTarget(ID, "plaid")
        # Unknown fields are kept, and dumped back with the target in its wire form.
        dumped = citation.model_dump(context=WIRE)
        assert {key: dumped[key] for key in row} == row
        assert json.loads(citation.model_dump_json(context=WIRE))["target"] == wire
        assert citation.model_dump(mode="json", context=WIRE)["target"] == wire
    for target in MALFORMED_TARGETS:
        for citation in _every_build(_row(target)):
            assert citation.target is None, (target, citation)
            assert citation.source == "silvia://your-account/checking"
            assert (citation.title, citation.cited_text) == ("Checking", "Balance: $1,234.00")
            extras = citation.model_extra or {}
            assert extras["search_result_index"] == 2
            assert extras["type"] == "search_result_location"
    for row in ({"source": "silvia://your-portfolio"}, {"source": "s", "cited_text": None}):
        for citation in _every_build(row):
            assert (citation.title, citation.cited_text) == (None, None), citation


@PROPERTY
@given(
    st.sampled_from(MODELS),
    st.one_of(citation_rows(), citation_rows(target=canonical_wire_targets)),
)
def test_model_dump_and_json_give_the_row_back_with_the_parsed_target(
    model: type[Citation], row: dict[str, Any]
) -> None:
    citation = model.model_validate(copy.deepcopy(row))
    dumped = citation.model_dump(context=WIRE)
    target = parse_citation_target(row.get("target"))
    assert citation.target == target
    assert dumped["target"] == (None if target is None else target.to_wire())
    assert {key: dumped[key] for key in row if key != "target"} == {
        key: value for key, value in row.items() if key != "target"
    }
    assert model.model_validate(dumped) == citation  # ...and it reads back as the same row
    try:  # a lone surrogate is no JSON a server can send
        text = json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    assert model.model_validate_json(text) == citation
    assert model.model_validate_json(citation.model_dump_json(context=WIRE)) == citation


@PROPERTY
@given(target=targets)
def test_a_typed_target_given_by_hand_is_kept(target: Any) -> None:
    # A citation built in code (a test, the reference server) keeps a target already read.
    for model in MODELS:
        assert model(source="s", target=target).target == target
        assert model.model_validate({"source": "s", "target": target}).target == target


def test_citations_are_frozen_and_inline_ones_keep_their_offset() -> None:
    citation = InlineCitation.model_validate(_row({"kind": "portfolio"}, offset=42))
    with pytest.raises(ValidationError):
        citation.target = None
    with pytest.raises(ValidationError):
        citation.source = "other"
    assert citation.offset == 42
    assert InlineCitation.model_validate(_row()).offset is None


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
@example([(False, {}), (False, {"title": "no source"}), (False, {"source": None})], Citation)
@example([(False, {"source": 7}), (False, {"source": ["s"]}), (True, {"source": "s"})], Citation)
@example(
    [(False, {"source": "s", "title": 7}), (False, {"source": "s", "cited_text": {}})], Citation
)
def test_load_splits_good_and_bad_rows_by_index(
    labelled: list[tuple[bool, Any]], model: type[Citation]
) -> None:
    rows = [row for _, row in labelled]
    good = [i for i, (ok, _) in enumerate(labelled) if ok]
    result = load_citations(copy.deepcopy(rows), model)
    assert [e.index for e in result.errors] == [i for i, (ok, _) in enumerate(labelled) if not ok]
    assert [e.raw for e in result.errors] == [row for ok, row in labelled if not ok]
    assert all(isinstance(e, RowError) and e.reason for e in result.errors)
    assert result.citations == tuple(model.model_validate(rows[i]) for i in good)
    assert all(type(c) is model for c in result.citations)
    for index, citation in zip(good, result.citations, strict=True):
        assert citation.source == rows[index]["source"]
        assert citation.target == parse_citation_target(rows[index].get("target"))
    for ok, row in labelled:
        if not ok and isinstance(row, dict):
            with pytest.raises(ValidationError):
                model.model_validate(row)


@PROPERTY
@given(st.one_of(st.lists(json_like, max_size=10), json_like))
@example(None)
@example([])
@example({"source": "s"})
@example(b"[]")
@example(({"source": "s"},))
def test_load_never_raises_for_junk(rows: Any) -> None:
    result = load_citations(rows, Citation)
    if isinstance(rows, list):
        assert len(result.citations) + len(result.errors) == len(rows)
        indexes = [e.index for e in result.errors]
        assert indexes == sorted(set(indexes))
        assert all(0 <= i < len(rows) for i in indexes)
    elif rows is None:
        assert result == CitationRows(())
    else:  # not a list: one error, for the whole
        assert result.citations == ()
        assert [e.index for e in result.errors] == [-1]
        assert result.errors[0].reason.startswith("expected a list, got ")


def test_load_says_what_is_wrong_with_each_bad_row_and_logs_the_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows = [
        {"title": "no source"},
        "not a row",
        _row({"kind": "web", "url": "javascript:x"}),  # a bad target is not a bad row
        {"source": 1, "title": 2},
        _row(offset="a"),
        {"source": "s", "cited_text": ["x"]},
    ]
    with caplog.at_level(logging.WARNING, logger="silvia_client"):
        result = load_citations(rows, InlineCitation)
    assert [(e.index, e.reason, e.raw) for e in result.errors] == [
        (0, "source: missing", rows[0]),
        (1, "row: model_type", "not a row"),
        (3, "source: string_type; title: string_type", rows[3]),
        (4, "offset: int_type", rows[4]),
        (5, "cited_text: string_type", rows[5]),
    ]
    assert [r.getMessage() for r in caplog.records] == ["skipped 5 malformed citation row(s)"]
    only = RowError(-1, "expected a list, got dict")
    assert load_citations({"source": "s"}, Citation).errors == (only,)


def test_load_a_large_list_and_deeply_nested_extras() -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID}] * 10}
    rows: list[Any] = [_row(wire) for _ in range(5_000)]
    rows.append({"nope": 1})
    result = load_citations(rows, Citation)
    assert len(result.citations) == 5_000
    assert isinstance(result.citations[-1].target, AccountsTarget)
    assert [e.index for e in result.errors] == [5_000]
    deep: object = None
    for _ in range(20_000):
        deep = [deep]
    rows = [_row({"kind": "web", "url": "https://e.example", "deep": deep}, deep=deep)]
    result = load_citations(rows, Citation)
    assert result.errors == ()
    assert result.citations[0].target == WebTarget("https://e.example")


class _SaysOtherwise(dict):  # type: ignore[type-arg]
    """A dict subclass whose `get` and `items` say something other than what it holds."""

    def get(self, key: object, default: object = None) -> object:
        return "said otherwise"

    def items(self) -> Any:
        return [("source", "said otherwise"), ("title", "said otherwise")]


def test_dict_subclass_rows() -> None:
    # A row that cannot even be read is a bad row like any other.
    rows = [_row(), RaisingDict(source="s"), _row()]
    result = load_citations(rows, Citation)
    assert len(result.citations) == 2
    # The reason names the error's type and nothing it says; the row is kept as sent.
    (error,) = result.errors
    assert (error.index, error.reason) == (1, "unreadable row: RuntimeError")
    assert error.raw is rows[1]
    # Read as `dict()` copies it, whichever methods a pydantic-core version calls.
    row = _SaysOtherwise(_row({"kind": "web", "url": "https://e.example"}, offset=3))
    for model in MODELS:
        result = load_citations([row], model)
        assert result.errors == ()
        assert result.citations == load_citations([dict(row)], model).citations
        assert result.citations[0].title == "Checking"
        assert result.citations[0].target == WebTarget("https://e.example")


def test_a_row_shows_in_a_notebook_as_the_display_views_draw_it() -> None:
    from silvia_client.display import citation_html, citation_markdown

    row = InlineCitation(source="silvia://web", title="Rates <today>", offset=0)
    assert row._repr_html_() == citation_html(row)
    assert row._repr_markdown_() == citation_markdown(row)
    assert "Rates &lt;today&gt;" in row._repr_html_()
