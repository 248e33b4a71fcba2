"""JSON as the wire carries it: `loads`, which keeps every number, and `most_values`.

Where things are: the two are used where a call decodes what the server sent,
an event's data (`chat/events.py`, counted in `chat/_stream.py`) and a history
body (`sessions/_history.py`); the cap they are counted against is
`DEFAULTS.bytes_per_value` (`_wire.py`).

`loads` is `json.loads` with two differences, so that a valid JSON number never
makes a row unreadable. An integer Python refuses to read (longer than
`sys.get_int_max_str_digits()`, 4,300 digits by default: a process-wide setting
that is the program's, not ours to change) is kept as a `decimal.Decimal` of the
same value; so is a number past a float's range, which `float` reads as
infinity. Every other number is the `int` or `float` `json.loads` gives.

`most_values` is an upper bound on how many values (objects, arrays, keys,
strings, numbers, literals) `loads` would build, counted on the text before it
is decoded: decoding is where a body of tiny values grows dozens of times over.
"""

from __future__ import annotations

import json
from decimal import Decimal
from math import isinf
from typing import Any

__all__ = ["loads", "most_values"]


def _integer(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:  # past the interpreter's digit limit
        return Decimal(text)


def _real(text: str) -> float | Decimal:
    value = float(text)
    return Decimal(text) if isinf(value) else value


def loads(data: str | bytes) -> Any:
    """`json.loads(data)`, every number kept with its exact value (the module's docstring)."""
    return json.loads(data, parse_int=_integer, parse_float=_real)


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
