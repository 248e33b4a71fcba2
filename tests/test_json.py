"""JSON as the wire carries it (`_sse.py`; issue 28, findings 6 and 9).

`most_values`, counted before decoding, is never below the number of values
decoding builds, whatever the document's shape or layout: it is what the count
cap holds a call to. `loads` keeps every valid number with its exact value,
where `json.loads` refuses an integer past the interpreter's digit limit and
reads a number past a float's range as infinity.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client._sse import holds_infinity, loads, most_values

from .depth import examples

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=60,
)
layouts = st.sampled_from([{}, {"separators": (",", ":")}, {"indent": 1}, {"ensure_ascii": False}])


def values(document: Any) -> int:
    """Every value `json.loads` builds: containers, keys, strings, numbers, literals."""
    if isinstance(document, dict):
        return 1 + sum(1 + values(value) for value in document.values())
    if isinstance(document, list):
        return 1 + sum(values(item) for item in document)
    return 1


@settings(max_examples=examples(300), deadline=None)
@given(documents, layouts)
def test_the_count_is_never_below_the_values_decoding_builds(
    document: Any, layout: dict[str, Any]
) -> None:
    text = json.dumps(document, **layout)
    built = values(json.loads(text))
    assert most_values(text) >= built
    assert most_values(text.encode()) >= built  # a history body is counted as bytes


@pytest.mark.parametrize(
    ("piece", "each"),
    [(b"[0]", 2), (b'"ab"', 1), (b"7", 1), (b'{"k":0}', 3), (b"[[0]]", 3)],
)
def test_the_count_of_tiny_nonempty_values_is_exact(piece: bytes, each: int) -> None:
    body = b"[" + b",".join([piece] * 1000) + b"]"
    assert values(json.loads(body)) == most_values(body) == 1 + 1000 * each
    assert most_values(body.decode()) == 1 + 1000 * each  # an event's data is counted as text


HUGE = "9" * 5000  # valid JSON, past `sys.get_int_max_str_digits()` (4,300 unless changed)


def test_an_integer_past_the_digit_limit_is_kept_as_its_exact_decimal() -> None:
    if hasattr(sys, "get_int_max_str_digits"):  # 3.10.7 and later
        with pytest.raises(ValueError, match="digit"):
            json.loads(HUGE)  # what the stdlib does
    got = loads('{"n": HUGE, "m": -HUGE, "small": 12}'.replace("HUGE", HUGE))
    assert got == {"n": Decimal(HUGE), "m": Decimal("-" + HUGE), "small": 12}
    assert str(got["n"]) == HUGE
    assert type(got["small"]) is int


def test_a_number_past_a_floats_range_is_kept_as_its_exact_decimal() -> None:
    assert json.loads("1e400") == float("inf")  # what the stdlib does
    text = "[1e400, -2.5E+999, 1.5, 1e-400]"
    for got in loads(text), loads(text.encode()):  # an event's data, a history body
        assert got == [Decimal("1e400"), Decimal("-2.5E+999"), 1.5, 0.0]
        assert [type(value) for value in got] == [Decimal, Decimal, float, float]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.recursive(
        scalars | st.sampled_from([float("inf"), -float("inf")]),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner),
        max_leaves=20,
    )
)
def test_holds_infinity_finds_an_infinity_at_any_depth_and_nothing_else(document: Any) -> None:
    # The fast path reads a text again the plain way when this says yes: a miss keeps
    # pydantic's infinity for a number `loads` keeps as a Decimal, a false alarm costs speed.
    try:
        json.dumps(document, allow_nan=False)  # refuses an infinity, wherever it is
    except ValueError:
        assert holds_infinity(document)
    else:
        assert not holds_infinity(document)
