"""The quick paths of the hot loops give exactly what the plain paths give.

Each optimisation made for the benchmarks (benchmarks/) has a plain
counterpart that defines its behaviour: `json.loads`, `model_validate`, the
event-stream algorithm as the spec words it, the readers of `EventDecoder`.
These tests hold the quick path to it on arbitrary input, so a behaviour
change cannot hide in a fast path.
"""

from __future__ import annotations

import asyncio
import codecs
import copy
import gc
import gzip
import json
import logging
import pickle
import re
from contextlib import suppress
from itertools import pairwise
from typing import Any
from unittest.mock import patch

import httpx
import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient, SilviaClient, _json, _sse_reader
from silvia_client._gc import gc_paused
from silvia_client._json import loads, reads_escapes_right
from silvia_client._sse import EventTooLarge, SSEFields, SSEParser, iter_sse_fields
from silvia_client.chat._turn import TurnBuilder
from silvia_client.chat.events import (
    CitationEvent,
    DoneEvent,
    MalformedEvent,
    TextEvent,
    UnknownEvent,
    decode_event,
    event_decoder,
)
from silvia_client.citations import Citation, InlineCitation, _rows_read, parse_citation_target
from silvia_client.citations._rows_read import (
    _target_from_json,
    citation_from_json,
    load_json_citations,
)
from silvia_client.errors import StreamError, StreamTooLargeError
from silvia_client.sessions import parse_session, read_session

# --- JSON -------------------------------------------------------------------------
# Text, not only values: JSON as a server might write it, valid or nearly so, with
# whatever whitespace, escapes, numbers and nesting `json.loads` and pydantic-core's
# parser could read differently.

_WHITESPACE = st.text(" \t\n\r", max_size=2) | st.sampled_from(["\x0c", "\xa0", "\u2028", "\ufeff"])
_DIGITS = st.text("0123456789", min_size=1, max_size=25) | st.sampled_from(
    ["0", "00", "1" * 4300, "9" * 4301, "9007199254740993", "18446744073709551616"]
)
_NUMBERS = st.one_of(
    st.builds(
        lambda sign, whole, fraction, exponent: sign + whole + fraction + exponent,
        st.sampled_from(["", "", "-", "+", "--"]),
        _DIGITS | st.just(""),
        st.just("") | _DIGITS.map(lambda digits: "." + digits) | st.just("."),
        st.just("")
        | st.builds(
            lambda e, sign, digits: e + sign + digits,
            st.sampled_from("eE"),
            st.sampled_from(["", "+", "-"]),
            _DIGITS | st.sampled_from(["", "308", "324", "400", "99999999999999999999"]),
        ),
    ),
    st.floats().map(repr),
    st.floats(allow_nan=False).map(json.dumps),
    st.integers().map(str),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "-NaN", "+Infinity", "nan", "inf", "-0"]),
)
_LITERALS = st.sampled_from(["true", "false", "null", "True", "tru", "nul", "nulll"])
_ESCAPES = st.one_of(
    st.sampled_from(
        ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\x", "\\u", "\\u12", "\\'"]
    ),
    st.integers(0, 0xFFFF).map(lambda code: f"\\u{code:04x}"),
    st.integers(0xD800, 0xDFFF).map(lambda code: f"\\u{code:04X}"),
    st.sampled_from(["\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud800\\u0041", "\\udc00\\ud800"]),
)
_RAW = st.text(max_size=3) | st.sampled_from(
    ["\ud800", "\udfff", "\x00", "\x1f", "\x7f", "é", "😀"]
)
_STRINGS = st.lists(_ESCAPES | _RAW, max_size=5).map(lambda parts: '"' + "".join(parts) + '"')
_KEYS = _STRINGS | st.sampled_from(['"a"', '"b"', '"a"'])  # duplicate keys, often


def _array(items: list[tuple[str, str, str]], trailing: str) -> str:
    return "[" + ",".join(before + item + after for before, item, after in items) + trailing + "]"


def _object(members: list[tuple[str, str, str]], trailing: str) -> str:
    return "{" + ",".join(f"{key}{colon}{value}" for key, colon, value in members) + trailing + "}"


_SCALAR_TEXTS = _NUMBERS | _LITERALS | _STRINGS


def _containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    trailing = st.sampled_from(["", "", "", ","])
    return st.builds(
        _array, st.lists(st.tuples(_WHITESPACE, inner, _WHITESPACE), max_size=4), trailing
    ) | st.builds(
        _object,
        st.lists(st.tuples(_KEYS, st.sampled_from([":", " : ", ""]), inner), max_size=4),
        trailing,
    )


_VALUES = st.recursive(_SCALAR_TEXTS, _containers, max_leaves=12)


def _nest(depth: int, inner: str, opening: str) -> str:
    closing = "]" if opening == "[" else "]}"
    return opening * depth + inner + closing * depth


_JSON_TEXTS = st.builds(
    lambda before, value, after: before + value + after,
    _WHITESPACE,
    _VALUES
    | st.builds(
        _nest,
        st.integers(0, 250) | st.sampled_from([2_000, 100_000]),  # pydantic-core stops at 200
        _VALUES,
        st.sampled_from(["[", '{"a":[']),
    ),
    _WHITESPACE,
)


@st.composite
def _mutated(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> str:
    text = draw(texts)
    where = draw(st.integers(0, len(text)))
    return draw(
        st.sampled_from(
            [
                text,
                text,
                text[:where],  # cut short
                text[:where]
                + draw(st.sampled_from(['"', "\\", ",", "]", "}", "x", "\x00"]))
                + text[where:],
                text + draw(st.sampled_from(["x", " 1", "\x00", "]"])),
            ]
        )
    )


JSON_TEXTS = st.one_of(
    _mutated(_JSON_TEXTS),
    st.text(),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    ).map(json.dumps),
)


def _canonical(value: object) -> list[object]:
    # Every type, value, key and order, floats to the bit (-0.0, NaN); iterative,
    # for values nested deeper than the recursion limit.
    out: list[object] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(("dict", len(item)))
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(("key", key))
        elif isinstance(item, list):
            out.append(("list", len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, float):
            out.append(("float", item.hex()))
        elif isinstance(item, tuple) and item and item[0] == "key":
            out.append(item)
        else:
            out.append((type(item).__name__, item))
    return out


def _outcome(function: Any, text: str | bytes) -> tuple[str, object]:
    try:
        value = function(text)
    except RecursionError:
        # Where the text is deep enough to meet the limit depends on the caller's own
        # depth, so which container raised may differ; that it raised may not.
        return "raised", RecursionError
    except Exception as error:
        return "raised", (type(error), str(error))
    return "value", _canonical(value)


@settings(max_examples=800, deadline=None)
@given(JSON_TEXTS)
def test_loads_is_json_loads(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


@settings(max_examples=300, deadline=None)
@given(JSON_TEXTS, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32-le", "bad byte"]))
def test_loads_of_bytes_is_json_loads(text: str, encoding: str) -> None:
    # A session body arrives as bytes: `json.loads` detects its encoding, and lets
    # UTF-8 encoded surrogates through.
    if encoding == "bad byte":
        body = text.encode("utf-8", "surrogatepass")
        body = body[: len(body) // 2] + b"\xff" + body[len(body) // 2 :]
    else:
        body = text.encode(encoding, "surrogatepass")
    assert _outcome(loads, body) == _outcome(json.loads, body)


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # a lone surrogate, escaped
        '"\ud800"',  # and raw
        '"\\ud83d\\ude00 \\u00e9"',
        '{"a": 1, "b": 2, "a": 3}',
        "[NaN, Infinity, -Infinity, -0, -0.0, 1e400, 9007199254740993]",
        "[" * 201 + "]" * 201,
        "1" * 4301,
        "\ufeff{}",
    ],
)
def test_loads_reads_the_edge_cases_as_json_loads_does(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


def test_loads_falls_back_to_json_loads_for_a_parser_that_misreads_escapes() -> None:
    # pydantic-core before 2.18.4 gave "Ã©" for "\u00e9".
    def mojibake(data: Any) -> Any:
        return json.loads(data).encode().decode("latin-1")

    assert not reads_escapes_right(mojibake)
    assert reads_escapes_right(pydantic_core.from_json) == _json.FAST
    assert reads_escapes_right(json.loads)


def test_loads_uses_the_fast_parser_where_it_reads_escapes_right() -> None:
    if not _json.FAST:
        pytest.skip(f"pydantic-core {pydantic_core.__version__} misreads escapes")
    assert loads is not json.loads


# --- session bodies -----------------------------------------------------------------


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


_SESSION = {
    "session": {"id": "sess_1", "title": "T\u00e9st \ud83d\ude00"},
    "messages": [
        {
            "id": "m1",
            "role": "assistant",
            "content": "lone \ud800 surrogate, NaN below",
            "score": float("nan"),
            "inline_citations": [
                {
                    "source": "https://www.irs.gov/p590a",
                    "target": {"kind": "tax_reference", "url": "https://www.irs.gov/p590a"},
                    "offset": 3,
                    "depth": _nested(60),
                },
                {"source": "silvia://x", "target": {"kind": "web", "url": 1}},
                {"title": "no source"},
            ],
            "citations": [{"source": "silvia://your-portfolio", "target": {"kind": "portfolio"}}],
        },
        "not a message",
    ],
}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
@pytest.mark.parametrize("nesting", [0, 300])
def test_read_session_is_parse_session_of_json_loads(encoding: str, nesting: int) -> None:
    text = json.dumps(_SESSION)
    if nesting:  # past pydantic-core's limit of 200: json.loads reads it
        text = text.replace('"not a message"', "[" * nesting + "]" * nesting)
    body = text.encode(encoding, "surrogatepass")
    assert _session_outcome(read_session(body, "sess_1")) == _session_outcome(
        parse_session(json.loads(body), "sess_1")
    )
    assert gc.isenabled()


def _session_outcome(session: Any) -> object:
    return (
        session.id,
        session.title,
        repr(session.extra),
        [(error.index, error.reason, repr(error.raw)) for error in session.message_errors],
        [
            (
                repr(message),
                message.content,
                repr(message.extra),
                [row.model_dump() for row in (*message.citations, *message.inline_citations)],
                [
                    (error.index, error.reason)
                    for error in (*message.citation_errors, *message.inline_citation_errors)
                ],
            )
            for message in session.messages
        ],
    )


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"messages": 1}', b"\xff"])
def test_read_session_raises_as_parse_session_of_json_loads_and_resumes_the_collector(
    body: bytes,
) -> None:
    with pytest.raises((ValueError, RecursionError)) as info:
        read_session(body, "sess_1")
    with pytest.raises(info.type):
        parse_session(json.loads(body), "sess_1")
    assert gc.isenabled()


# --- citation rows ----------------------------------------------------------------

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
TARGETS = st.one_of(
    SCALARS,
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["web", "account", "accounts", "portfolio", "market_data", "x"])},
        optional={
            "url": st.sampled_from(["https://example.com/a", "ftp://x", ""]) | SCALARS,
            "accountId": st.sampled_from(["acc_0123456789abcdef"]) | SCALARS,
            "provider": st.sampled_from(["plaid", "manual", "snaptrade", "other"]) | SCALARS,
            "ticker": st.sampled_from(["VTI"]) | SCALARS,
            "accounts": st.lists(
                st.fixed_dictionaries(
                    {"accountId": st.sampled_from(["a", ""]) | SCALARS},
                    optional={"provider": SCALARS},
                ),
                max_size=3,
            ),
        },
    ),
)
ROWS = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=2),
    st.fixed_dictionaries(
        {},
        optional={
            "source": st.sampled_from(["silvia://analysis"]) | SCALARS,
            "title": SCALARS,
            "cited_text": SCALARS,
            "target": TARGETS,
            "offset": SCALARS,
            "type": SCALARS,
            "search_result_index": SCALARS,
            "model_config": SCALARS,
            "_private": SCALARS,
        },
    ),
).map(lambda row: json.loads(json.dumps(row)))  # exactly what json.loads makes


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


@settings(max_examples=300)
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


@settings(max_examples=300, deadline=None)
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


# --- events -----------------------------------------------------------------------


def _reference_text_event(data: str) -> object:
    # How any known event is read (events.py): JSON, then the documented shape.
    try:
        value = json.loads(data)
    except ValueError:
        return MalformedEvent("text", data, "invalid JSON")
    except RecursionError:
        return MalformedEvent("text", data, "nested too deeply")
    if not isinstance(value, dict):
        return MalformedEvent("text", data, f"expected an object, got {type(value).__name__}")
    text = value.get("text")
    if not isinstance(text, str):
        return MalformedEvent("text", data, "expected 'text' to be str")
    return TextEvent(text)


@given(JSON_TEXTS | st.dictionaries(st.sampled_from(["text", "t"]), SCALARS).map(json.dumps))
def test_a_text_event_reads_as_the_general_rule_says(data: str) -> None:
    assert decode_event("text", data, DEFAULT_WIRE) == _reference_text_event(data)


def _reference_citation_event(data: str, offset: int) -> object:
    # How a citation event is read (events.py), with pydantic's own validation.
    try:
        value = json.loads(data)
    except ValueError:
        return MalformedEvent("citation", data, "invalid JSON")
    except RecursionError:
        return MalformedEvent("citation", data, "nested too deeply")
    if not isinstance(value, dict):
        return MalformedEvent("citation", data, f"expected an object, got {type(value).__name__}")
    row = value.get("citation")
    if not isinstance(row, dict):
        return MalformedEvent("citation", data, "expected 'citation' to be dict")
    try:
        return CitationEvent(InlineCitation.model_validate({**row, "offset": offset}))
    except ValidationError:
        return MalformedEvent("citation", data, "invalid citation")


@settings(max_examples=300, deadline=None)
@given(
    JSON_TEXTS | ROWS.map(lambda row: json.dumps({"citation": row})),
    st.integers(0, 10_000),
)
def test_a_citation_event_reads_as_the_general_rule_says(data: str, offset: int) -> None:
    decode_event("citation", '{"citation": {"source": "s"}}', DEFAULT_WIRE)  # the quick path on
    assert decode_event("citation", data, DEFAULT_WIRE, offset) == _reference_citation_event(
        data, offset
    )


def test_deeply_nested_text_data_is_malformed_not_raised() -> None:
    event = decode_event("text", "[" * 100_000, DEFAULT_WIRE)
    assert isinstance(event, MalformedEvent)


def test_other_events_keep_their_rules() -> None:
    assert decode_event("done", " ", DEFAULT_WIRE) == DoneEvent()
    assert decode_event("done", "{", DEFAULT_WIRE) == MalformedEvent("done", "{", "invalid JSON")
    assert decode_event("ping", "{}", DEFAULT_WIRE) == UnknownEvent("ping", "{}")


# --- SSE --------------------------------------------------------------------------

PIECES = [
    "data", "data:", "data: ", "event", "event:", "event: ", "id", "id: ", "retry:", "retry: ",
    ":", ": ping", "x", "é", "\0", "12", "+3", " ", "\n", "\r", "\r\n", "\n\n", "\ufeff",
    "foo:", "a:b", "data:  x", "😀",
]  # fmt: skip


def plain_sse(body: bytes, limit: int | None) -> tuple[list[SSEFields], bool]:
    """The event-stream algorithm as the spec words it, on the whole body: the
    events, and whether a line or an event's data went over `limit` bytes."""

    def over(text: str) -> bool:
        return limit is not None and len(text.encode()) > limit

    # The stdlib's decoder, one leading BOM dropped; the bytes of a character not
    # finished at the end are not text yet (the stream might go on).
    text = codecs.getincrementaldecoder("utf-8-sig")("replace").decode(body)
    *lines, unended = re.split("\r\n|\r|\n", text)
    events: list[SSEFields] = []
    event, data, last_id, retry = "", list[str](), "", None
    for line in lines:
        if over(line):
            return events, True
        if not line:
            if data:
                events.append((event or "message", "\n".join(data), last_id, retry))
            event, data, retry = "", [], None
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
                if over("\n".join(data)):
                    return events, True
            elif name == "event":
                event = value
            elif name == "id" and "\0" not in value:
                last_id = value
            elif name == "retry":
                with suppress(ValueError):
                    retry = int(value)
    return events, over(unended)


def quick_sse(chunks: list[bytes], limit: int | None) -> tuple[list[SSEFields], bool]:
    events: list[SSEFields] = []
    try:
        events.extend(iter_sse_fields(chunks, max_event_bytes=limit))
    except EventTooLarge:
        return events, True
    return events, False


# Whole lines and events as a server writing plainly sends them, which the loop
# reads a run at a time (`_sse_runs.canonical_run`), mixed with the pieces above.
CANONICAL = [
    'event: text\ndata: {"text":"caf\u00e9 "}\n\n', "event: a\ndata: b\n\n", ": ping\n", "\n",
    "event: x\ndata: \n\n", "event: \ndata: x\n\n", "event:  y\ndata:  {}\n\n", ":\n",
    'event: text\ndata: {"text":"a\\"b"}\n\n',
    "event: " + "n" * 30 + "\ndata: " + "d" * 30 + "\n\n",
]  # fmt: skip


def sse_body(data: st.DataObject) -> bytes:
    pieces = st.sampled_from(PIECES) | st.sampled_from(CANONICAL)
    text = "".join(data.draw(st.lists(pieces, max_size=30)))
    body = data.draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb"])) + text.encode()
    return body + data.draw(st.sampled_from([b"", b"\xff", b"\xe2\x82"]))


def cut(body: bytes, data: st.DataObject) -> list[bytes]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    return [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]


@settings(max_examples=600)
@given(st.data())
def test_sse_reads_as_the_plain_algorithm(data: st.DataObject) -> None:
    # The one loop (`_sse_reader.read_events`): any body, cut anywhere, with or without a
    # limit, reads as the spec's algorithm reads the whole of it.
    body = sse_body(data)
    limit = data.draw(st.none() | st.integers(0, 40) | st.integers(40, 200))
    assert quick_sse(cut(body, data), limit) == plain_sse(body, limit)


@settings(max_examples=300)
@given(st.data())
def test_a_long_text_reads_the_same_a_window_at_a_time(data: st.DataObject) -> None:
    # A chunk longer than `_RUN_WINDOW` (a body read whole) is read a window at a
    # time; windows of any size, cutting events anywhere, read as the spec does.
    body = sse_body(data)
    limit = data.draw(st.none() | st.integers(30, 200))
    with patch.object(_sse_reader, "_RUN_WINDOW", data.draw(st.integers(1, 60))):
        assert quick_sse(cut(body, data), limit) == plain_sse(body, limit)


@settings(max_examples=400)
@given(st.data())
def test_each_event_comes_with_the_chunk_that_ends_it(data: st.DataObject) -> None:
    # Nothing waits for a later chunk: after each chunk, the events read are those
    # of the body so far (a run's rest is kept only if no event ends in it).
    chunks = cut(sse_body(data), data)
    limit = data.draw(st.none() | st.integers(30, 200))
    parser = SSEParser(max_event_bytes=limit)
    read: list[SSEFields] = []
    for end in range(1, len(chunks) + 1):
        expected, over = plain_sse(b"".join(chunks[:end]), limit)
        try:
            read += parser.feed_fields(chunks[end - 1])
        except EventTooLarge:
            assert over
        assert read == expected
        if over:
            break


@settings(max_examples=300)
@given(st.data())
def test_iter_sse_fields_is_the_parser(data: st.DataObject) -> None:
    # The loop pulls the body's chunks in `iter_sse_fields`, and is fed them one at
    # a time in `SSEParser`; any body, cut anywhere, reads the same.
    chunks = cut(sse_body(data), data)
    parser = SSEParser()
    expected = [fields for chunk in chunks for fields in parser.feed_fields(chunk)]
    expected += parser.close_fields()
    assert list(iter_sse_fields(chunks)) == expected


# --- gc_paused --------------------------------------------------------------------


def test_gc_paused_nests_and_restores() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


# --- the chat stream's body -------------------------------------------------------

_TURN = (
    b'event: session\ndata: {"sessionId":"s1"}\n\n'
    b'event: text\ndata: {"text":"caf\xc3\xa9 "}\n\n'
    b": ping\n\n"
    b'event: text\ndata: {"text":"ok"}\n\n'
    b"event: done\ndata: {}\n\n"
)


def _clients(encoding: str | None) -> tuple[SilviaClient, AsyncSilviaClient]:
    body = gzip.compress(_TURN) if encoding == "gzip" else _TURN
    headers = {"content-type": "text/event-stream"}
    if encoding is not None:
        headers["content-encoding"] = encoding

    def handler(request: httpx.Request) -> httpx.Response:
        # Cut in small pieces, so that the decoder (when there is one) sees them.
        return httpx.Response(
            200, headers=headers, content=[body[i : i + 7] for i in range(0, len(body), 7)]
        )

    sync = SilviaClient(
        base_url="https://silvia.test",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )

    async def ahandler(request: httpx.Request) -> httpx.Response:
        async def chunks() -> Any:
            for i in range(0, len(body), 7):
                yield body[i : i + 7]

        return httpx.Response(200, headers=headers, content=chunks())

    asynchronous = AsyncSilviaClient(
        base_url="https://silvia.test",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(ahandler)),
    )
    return sync, asynchronous


@pytest.mark.parametrize("encoding", [None, "identity", "gzip"])
def test_a_stream_reads_the_same_with_or_without_content_encoding(encoding: str | None) -> None:
    sync, asynchronous = _clients(encoding)
    with sync, sync.chat.stream("hi") as stream:
        turn = stream.until_done()
    assert (turn.text, turn.session_id, turn.complete) == ("café ok", "s1", True)

    async def read() -> Any:
        async with asynchronous, asynchronous.chat.stream("hi") as stream:
            return await stream.until_done()

    turn = asyncio.run(read())
    assert (turn.text, turn.session_id, turn.complete) == ("café ok", "s1", True)


# --- the chat stream's quick reading ----------------------------------------------
# The stream reads runs of canonical events by regular expression, and text events
# of the plain shape straight off the wire (`EventDecoder.quick`): any body, cut
# anywhere, must give the events that the spec's algorithm and `decode_event` give.

_TEXTS = st.text(max_size=8) | st.sampled_from(['a"b', "a\\b", "\\u00e9", "\x1f", "\ud800", "€"])


def _text_data(text: str, style: int) -> str:
    if style == 0:  # as a server writes it compactly: the shortcut's shape, when it can be
        return json.dumps({"text": text}, separators=(",", ":"), ensure_ascii=False)
    if style == 1:
        return json.dumps({"text": text})  # spaced, escaped: the general way
    return '{"text":"' + text + '"}'  # raw: not always JSON, or not this text


_CHAT_ELEMENTS = st.one_of(
    st.builds(
        lambda text, style: f"event: text\ndata: {_text_data(text, style)}\n\n",
        _TEXTS,
        st.integers(0, 2),
    ),
    ROWS.map(lambda row: "event: citation\ndata: " + json.dumps({"citation": row}) + "\n\n"),
    st.sampled_from(
        [
            ": ping\n\n",
            "\n",
            'event: session\ndata: {"sessionId":"s1"}\n\n',
            "event: done\ndata: {}\n\n",
            "event: tool\ndata: {}\n\n",
            "event: text\ndata: [1]\n\n",
            'event: text\r\ndata: {"text":"crlf"}\r\n\r\n',
            'id: 7\nevent: text\ndata: {"text":"x"}\n\n',
        ]
    ),
    st.sampled_from(PIECES),
)


def _expected_chat(body: bytes, limit: int) -> tuple[list[object], str]:
    """The events a stream must yield, and how it ends, by the plain algorithm."""
    events, over = plain_sse(body, limit)
    builder = TurnBuilder()
    expected: list[object] = []
    for name, data, _, _ in events:
        event = decode_event(name, data, DEFAULT_WIRE, builder.text_length)
        builder.apply(event)
        expected.append(event)
        if isinstance(event, DoneEvent):
            return expected, "done"
    return expected, "too large" if over else "incomplete"


def _chat_client(chunks: list[bytes], limit: int) -> tuple[SilviaClient, AsyncSilviaClient]:
    headers = {"content-type": "text/event-stream"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, content=iter(chunks))

    async def ahandler(request: httpx.Request) -> httpx.Response:
        async def body() -> Any:
            for chunk in chunks:
                yield chunk

        return httpx.Response(200, headers=headers, content=body())

    base = "https://silvia.test"
    return (
        SilviaClient(
            base_url=base,
            max_event_bytes=limit,
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        ),
        AsyncSilviaClient(
            base_url=base,
            max_event_bytes=limit,
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(ahandler)),
        ),
    )


def _ending(error: StreamError | None) -> str:
    if error is None:
        return "done"
    return "too large" if isinstance(error, StreamTooLargeError) else "incomplete"


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_chat_stream_reads_as_the_plain_algorithm_and_decode_event(data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(_CHAT_ELEMENTS, max_size=25)))
    body = data.draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + text.encode(
        "utf-8", "surrogatepass"
    )
    limit = data.draw(st.sampled_from([10**9, 4096]) | st.integers(1, 300))
    chunks = cut(body, data)
    expected, ending = _expected_chat(body, limit)
    sync, asynchronous = _chat_client(chunks, limit)

    read: list[object] = []
    error: StreamError | None = None
    with sync:
        try:
            for event in sync.chat.stream("hi"):
                read.append(event)
        except StreamError as failure:
            error = failure
        assert (read, _ending(error)) == (expected, ending)

        # Every event decoded by name and data, each beside its own (no shortcut).
        raw: list[tuple[str, str]] = []
        read = []
        try:
            with sync.chat.stream("hi") as stream:
                for sent, event in stream.iter_with_raw():
                    raw.append((sent.name, sent.data))
                    read.append(event)
        except StreamError:
            pass
        plain = [(name, value) for name, value, _, _ in plain_sse(body, limit)[0]]
        assert (raw, read) == (plain[: len(expected)], expected)

    async def aread() -> tuple[list[object], StreamError | None]:
        events: list[object] = []
        async with asynchronous:
            try:
                async for event in asynchronous.chat.stream("hi"):
                    events.append(event)
            except StreamError as failure:
                return events, failure
        return events, None

    events, ended_with = asyncio.run(aread())
    assert (events, _ending(ended_with)) == (expected, ending)


@given(_TEXTS | JSON_TEXTS, st.integers(0, 2))
def test_the_text_shortcut_reads_what_decode_event_reads(text: str, style: int) -> None:
    data = _text_data(text, style) if style < 3 else text
    quick = event_decoder(DEFAULT_WIRE).quick
    element = f"event: text\ndata: {data}\n\n"
    if "\n" in data or "\r" in data:
        return  # not one canonical event
    (read,) = quick.findall(element)
    shortcut, name, _ = read
    if not name:  # the shortcut read it
        assert TextEvent(shortcut) == decode_event("text", data, DEFAULT_WIRE)
    else:
        assert read == ("", "text", data)


def test_a_session_logs_its_bad_rows_after_the_collectors_pause() -> None:
    # A logging handler is the caller's code: it runs with the collector on, and
    # gets the warning each list with bad rows gives, as `load_citations` logs it.
    records: list[tuple[str, bool]] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append((record.getMessage(), gc.isenabled()))

    body = {
        "session": {"id": "s"},
        "messages": [
            {"role": "assistant", "citations": [{"title": "no source"}, "x"]},
            {"role": "assistant", "inline_citations": [{"source": 5}], "citations": []},
        ],
    }
    logger = logging.getLogger("silvia_client")
    handler = Handler()
    logger.addHandler(handler)
    try:
        read_session(json.dumps(body).encode(), "s")
        parse_session(body, "s")
    finally:
        logger.removeHandler(handler)
    expected = [
        ("skipped 2 malformed citation row(s)", True),
        ("skipped 1 malformed citation row(s)", True),
    ]
    assert records == expected * 2
