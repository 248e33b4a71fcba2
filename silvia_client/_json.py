"""JSON as the wire carries it: `loads`, which keeps every number; `most_values`; the fast path.

Where things are: these are used where a call decodes what the server sent, an
event's data (`chat/events.py`, counted in `_async/_stream.py`) and a history body
(`sessions/_history.py`); the cap they are counted against is
`DEFAULTS.bytes_per_value` (`_wire.py`).

`loads` is `json.loads` with two differences, so that a valid JSON number never
makes a row unreadable. An integer Python refuses to read (longer than
`sys.get_int_max_str_digits()`, 4,300 digits by default: a process-wide setting
that is the program's, not ours to change) is kept as a `decimal.Decimal` of the
same value; so is a number past a float's range, which `float` reads as
infinity. Every other number is the `int` or `float` `json.loads` gives. One
decoder is made once: `json.loads` with hooks builds a decoder at every call,
which cost more than decoding a short event.

`most_values` is an upper bound on how many values (objects, arrays, keys,
strings, numbers, literals) `loads` would build, counted on the text before it
is decoded: decoding is where a body of tiny values grows dozens of times over.

The fast path (CONTRIBUTING, "Fast paths"): the events layer and the history
read decode with pydantic's parser (`pydantic_core.from_json`, a
`TypeAdapter`'s `validate_json`) when `FAST` is on, and go the plain way, `loads`,
whenever that parser refuses the text (nesting past 200, a lone surrogate, an
integer past 4,300 digits, anything not JSON) or its result `holds_infinity`:
pydantic's parser reads a number past a float's range as infinity, where `loads`
keeps a `Decimal`. `FAST` is the switch (`benchmarks/ablation.py` turns it off in a
copy of the tree to measure what it buys); `FAST_PATH`, read when a decoder is built,
is on where `FAST` is and the installed pydantic-core reads a `\\u` escape right
(pydantic 2.7's, 2.18, reads `"\\u20ac"` as three characters, not `€`).
"""

from __future__ import annotations

import json
from decimal import Decimal
from math import isinf
from typing import Any

from pydantic_core import from_json

__all__ = ["FAST", "FAST_PATH", "holds_infinity", "loads", "most_values"]

FAST = True  # pydantic's parser first, `loads` when it refuses (the module's docstring)


def _reads_escapes_right() -> bool:
    # pydantic-core 2.18 builds a string of ASCII text (escapes aside) as one byte a
    # character, so an escape past U+007F comes out as its UTF-8 bytes read as Latin-1:
    # no fast path there.
    return bool(from_json('"\\u00e9\\u20ac"') == "\u00e9\u20ac")


FAST_PATH = FAST and _reads_escapes_right()


def _integer(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:  # past the interpreter's digit limit
        return Decimal(text)


def _real(text: str) -> float | Decimal:
    value = float(text)
    return Decimal(text) if isinf(value) else value


_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_real)


def loads(data: str | bytes) -> Any:
    """`json.loads(data)`, every number kept with its exact value (the module's docstring)."""
    if isinstance(data, str):
        return _DECODER.decode(data)
    return json.loads(data, parse_int=_integer, parse_float=_real)  # bytes: its encoding found


def holds_infinity(value: object) -> bool:
    """Whether a float at infinity is anywhere in `value` (nested in dicts and lists).

    `loads` gives one only for the literals `Infinity` and `-Infinity`; pydantic's
    parser also for a number past a float's range, so a fast result that holds one
    is read again the plain way, which tells the two apart.
    """
    kind = type(value)
    if kind is float:
        return isinf(value)  # type: ignore[arg-type]
    if kind is dict:
        value = value.values()  # type: ignore[attr-defined]
    elif kind is not list:
        return False
    for item in value:  # type: ignore[attr-defined]
        kind = type(item)
        if kind is float:
            if isinf(item):
                return True
        elif (kind is dict or kind is list) and holds_infinity(item):
            return True
    return False


def most_values(data: str | bytes) -> int:
    """At least as many as the JSON values `loads(data)` builds, counted without decoding.

    Every value but the first stands after a `[` (an array's first element), a `,`
    (any later element or member) or a `:` (a member's value); a member's key after
    a `{` or a `,`. So `1 + ` the count of `{`, `[`, `,` and `:` is never below the
    number of values; those inside strings only make it larger.
    """
    if isinstance(data, bytes):
        return 1 + data.count(b"{") + data.count(b"[") + data.count(b",") + data.count(b":")
    return 1 + data.count("{") + data.count("[") + data.count(",") + data.count(":")
