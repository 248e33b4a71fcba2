"""Citation rows read off JSON are the rows `model_validate` makes, and as few objects as can be."""

from __future__ import annotations

import copy
import gc
import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client.citations import Citation, InlineCitation, _rows_read, parse_citation_target
from silvia_client.citations._rows_read import (
    _target_from_json,
    citation_from_json,
    load_json_citations,
)

from ..depth import examples
from .references import (
    ROWS,
    TARGETS,
)


def _model_outcome(build: Any) -> tuple[object, ...]:
    try:
        model = build()
    except ValidationError as error:
        return ("error", error.errors(include_url=False))
    return (
        type(model),
        list(model.__dict__.items()),
        list((model.__pydantic_extra__ or {}).items()),
        model.model_fields_set,
        model.__pydantic_private__,
        model.model_dump(),
        repr(model),
    )


@settings(max_examples=examples(300))
@given(ROWS, st.sampled_from([Citation, InlineCitation]), st.none() | st.integers(0, 99))
def test_citation_from_json_is_model_validate(
    row: Any, model: type[Citation], offset: int | None
) -> None:
    assert _model_outcome(lambda: citation_from_json(model, row)) == _model_outcome(
        lambda: model.model_validate(row)
    )
    if isinstance(row, dict):
        assert _model_outcome(lambda: citation_from_json(model, row, offset)) == _model_outcome(
            lambda: model.model_validate({**row, "offset": offset})
        )


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(TARGETS.map(lambda target: json.loads(json.dumps(target))), max_size=20))
def test_targets_read_from_json_are_the_parsers_whatever_was_read_before(
    targets: list[Any],
) -> None:
    # Shared by wire form: a key equal to an earlier one (1 == 1.0 == True) must
    # still give this target's own reading.
    for target in targets:
        assert _target_from_json(target) == parse_citation_target(target)


def test_rows_with_the_same_wire_target_share_one_value() -> None:
    wire = {"kind": "web", "url": "https://example.com/shared"}
    first = citation_from_json(Citation, {"source": "a", "target": dict(wire)})
    second = citation_from_json(InlineCitation, {"source": "b", "target": dict(wire)}, 3)
    assert first.target is second.target
    assert first.target == parse_citation_target(wire)


def test_the_table_of_shared_targets_stays_bounded() -> None:
    for number in range(3 * _rows_read._JSON_TARGETS_MAX):
        _target_from_json({"kind": "market_data", "ticker": f"T{number}"})
    assert len(_rows_read._JSON_TARGETS) <= _rows_read._JSON_TARGETS_MAX


def test_a_kept_rows_extras_are_not_tracked_by_the_collector() -> None:
    # Strings and numbers only: a dict of them is not tracked.
    row = json.loads(
        '{"type": "search_result_location", "source": "s", "search_result_index": 1,'
        ' "target": {"kind": "portfolio"}, "offset": 4}'
    )
    citation = citation_from_json(InlineCitation, row)
    assert not gc.is_tracked(citation.__pydantic_extra__)
    assert citation.__pydantic_extra__ == {
        "type": "search_result_location",
        "search_result_index": 1,
    }


class _Probe:
    # A class shaped as a pydantic model is (slots and a `__dict__`).
    __slots__ = ("__dict__", "a", "b", "c")


def _tracked_per_object(build: Any, count: int = 2000) -> float:
    gc.collect()
    before = len(gc.get_objects())
    kept = [build(number) for number in range(count)]
    tracked = len(gc.get_objects()) - before - 1  # less the list
    del kept
    return tracked / count


def _probe(number: int) -> _Probe:
    probe = object.__new__(_Probe)
    for name, value in (("x", "s"), ("y", number), ("z", _Probe), ("a", None)):
        object.__setattr__(probe, name, value)
    return probe


@pytest.mark.parametrize("model", [Citation, InlineCitation])
def test_a_kept_row_is_as_few_tracked_objects_as_any_object_with_attributes(
    model: type[Citation],
) -> None:
    # The model's own instances, built first, must not keep the quick path's rows
    # from holding their fields in the instance (see `_rows._prime`).
    wire = {"source": "s", "title": "t", "target": {"kind": "web", "url": "https://a.example"}}
    for _ in range(200):
        model.model_validate(wire)
    rows = [{"type": "x", "search_result_index": n, **wire} for n in range(2000)]
    for row in rows[:2]:  # the shared target and fields-sets, made once
        citation_from_json(model, row)
        if model is InlineCitation:
            citation_from_json(model, row, 0)
    # One object on CPython 3.11 and 3.12 (the fields in the instance), two
    # elsewhere (an instance's dict): never a fields-set per row.
    floor = _tracked_per_object(_probe)
    assert floor in (1.0, 2.0)
    assert _tracked_per_object(lambda n: citation_from_json(model, rows[n])) == floor
    if model is InlineCitation:
        assert _tracked_per_object(lambda n: citation_from_json(model, rows[n], n)) == floor


def _row_pair() -> tuple[InlineCitation, InlineCitation]:
    row = json.loads(
        '{"type": "search_result_location", "source": "s", "title": "t",'
        ' "target": {"kind": "portfolio"}}'
    )
    first = citation_from_json(InlineCitation, row, 1)
    second = citation_from_json(InlineCitation, dict(row), 2)
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__  # shared
    return first, second


def test_a_shared_fields_set_reads_as_pydantics_own() -> None:
    first, _ = _row_pair()
    plain = InlineCitation.model_validate(
        {
            "type": "search_result_location",
            "source": "s",
            "title": "t",
            "offset": 1,
            "target": {"kind": "portfolio"},
        }
    )
    assert first == plain
    assert hash(first) == hash(plain)
    for options in ({}, {"exclude_unset": True}, {"exclude_unset": True, "mode": "json"}):
        assert first.model_dump(**options) == plain.model_dump(**options)
    assert first.model_dump_json(exclude_unset=True) == plain.model_dump_json(exclude_unset=True)
    assert type(first.model_fields_set) is set
    assert first.model_fields_set == plain.model_fields_set


def test_a_rows_fields_set_is_its_own_to_change() -> None:
    first, second = _row_pair()
    first.model_fields_set.add("cited_text")
    assert "cited_text" in first.model_fields_set  # the change stays on the row...
    assert "cited_text" not in second.model_fields_set  # ...and on that row only
    assert first.model_dump(exclude_unset=True)["cited_text"] is None
    assert "cited_text" not in second.model_dump(exclude_unset=True)


def test_copies_of_a_row_own_their_fields_set() -> None:
    first, second = _row_pair()
    for copied in (
        first.model_copy(update={"cited_text": "q", "note": 1}),
        first.model_copy(update={"cited_text": "q", "note": 1}, deep=True),
    ):
        assert {"cited_text", "note"} <= copied.model_fields_set
        assert copied.model_dump(exclude_unset=True)["note"] == 1
    for copied in (copy.copy(first), copy.deepcopy(first), first.model_copy()):
        assert type(copied.__pydantic_fields_set__) is set
        assert copied == first
    assert "note" not in second.model_fields_set


def test_rows_sharing_a_fields_set_unpickle_each_with_its_own() -> None:
    first, second = _row_pair()
    loaded = pickle.loads(pickle.dumps([first, second]))
    assert loaded == [first, second]
    assert loaded[0].__pydantic_fields_set__ is not loaded[1].__pydantic_fields_set__
    loaded[0].model_fields_set.add("cited_text")
    assert "cited_text" not in loaded[1].model_fields_set


def test_the_shared_fields_set_copies_and_pickles_as_a_plain_set() -> None:
    # Whoever copies or pickles the set itself (not the row: pydantic copies it with
    # `copy`, and a row pickles a plain set) gets a plain set of the same names.
    shared = _row_pair()[0].__pydantic_fields_set__
    assert type(shared) is not set  # the shared one, as the pair was read
    for copied in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert type(copied) is set
        assert copied == set(shared)
        copied.add("changed")
    assert "changed" not in shared


def test_rows_with_every_field_typed_share_their_fields_set() -> None:
    # Each field of the model's type: the quick way, whose rows share one fields-set.
    for model, extra in ((Citation, {}), (InlineCitation, {"offset": 3})):
        row = {"source": "s", "title": "t", "cited_text": "q", **extra}
        first, second = citation_from_json(model, dict(row)), citation_from_json(model, dict(row))
        assert first == second == model.model_validate(row)
        assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__


def test_a_shared_fields_set_refuses_to_change() -> None:
    first, second = _row_pair()
    shared = first.__pydantic_fields_set__
    for change in (
        lambda: shared.add("x"),
        lambda: shared.discard("source"),
        lambda: shared.update({"x"}),
        lambda: shared.clear(),
        lambda: shared.pop(),
    ):
        with pytest.raises(TypeError, match=r"^a citation's shared fields-set cannot change; copy"):
            change()
    with pytest.raises(TypeError, match=r"^a citation's shared fields-set cannot change; copy"):
        shared |= {"x"}
    assert second.model_fields_set == {"type", "source", "title", "target", "offset"}


def test_the_tables_of_row_shapes_stay_bounded() -> None:
    for number in range(3 * _rows_read._SHAPES_MAX):
        citation_from_json(Citation, {"source": "s", f"extra_{number}": 1})
        citation_from_json(InlineCitation, {"source": "s", f"extra_{number}": 1}, 4)
    assert len(_rows_read._CITATION_SHAPES) <= _rows_read._SHAPES_MAX
    assert len(_rows_read._INLINE_CITATION_SHAPES) <= _rows_read._SHAPES_MAX


def test_citation_from_json_equals_model_validate_on_a_stored_row() -> None:
    row = {
        "type": "search_result_location",
        "source": "silvia://your-account/checking",
        "title": "Checking",
        "cited_text": "Balance: $1,234",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
        "target": {"kind": "account", "accountId": "acc_0123456789abcdef", "provider": "plaid"},
        "offset": 12,
    }
    fast = citation_from_json(InlineCitation, row)
    assert fast == InlineCitation.model_validate(row)
    assert fast.model_dump() == InlineCitation.model_validate(row).model_dump()
    assert load_json_citations([row, {"title": "no source"}], InlineCitation).citations == (fast,)


def test_citation_from_json_leaves_other_models_to_pydantic() -> None:
    class Strict(Citation):
        extra_field: int

    with pytest.raises(ValidationError):
        citation_from_json(Strict, {"source": "s"})
