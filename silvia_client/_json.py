"""`loads`: exactly `json.loads`, read by pydantic-core's parser wherever the two agree.

`pydantic_core.from_json` reads a small chat event three to nine times as fast
as `json.loads`, and a large session body about half again as fast. pydantic
ships with it, so using it adds no dependency. But `json.loads` is the
reference: what the SDK gives for any text must stay what `json.loads` gives.

The two differ only where `from_json` refuses text that `json.loads` reads:

* lone surrogates, escaped (`"\\ud800"`) or raw in a `str`, and the UTF-8
  encoded surrogates that `json.loads` of bytes lets through;
* a byte-order mark, and UTF-16 or UTF-32 bodies (bytes), which `json.loads`
  detects and decodes;
* nesting past 200 levels;
* integers past 4,300 digits (`json.loads` reads them when
  `sys.set_int_max_str_digits(0)` allows; `from_json` honours a lower limit
  itself) and floats past 4,300 characters.

So `loads` tries `from_json` and, when it refuses, asks `json.loads`, whose
value or exception is the answer: every error is `json.loads`'s own (a
`ValueError`, or a `RecursionError` for text nested too deep for it).
Everything `from_json` does accept (NaN and the infinities included, numbers
of any size, duplicate keys: the last value, at the first key's place) it
reads as `json.loads` does; `tests/fast_paths/test_json.py` holds the two together
over arbitrary JSON text.

pydantic-core before 2.18.4 (pydantic 2.7.0 to 2.7.3) misreads escaped
non-ASCII characters (`"\\u00e9"` gives `"Ã©"`). Where the installed version
does, checked once at import by reading such an escape, `loads` is
`json.loads` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic_core import from_json

__all__ = ["FAST", "loads"]


def reads_escapes_right(parse: Any) -> bool:
    """Whether `parse` reads escaped non-ASCII characters, and surrogate pairs, correctly."""
    try:
        return bool(parse('"\\u00e9\\ud83d\\ude00"') == "\u00e9\U0001f600")
    except Exception:
        return False


FAST = reads_escapes_right(from_json)
"""Whether `loads` uses `from_json` (False on a pydantic-core that misreads escapes)."""


def _loads(data: str | bytes) -> Any:
    try:
        return from_json(data)
    except Exception:  # a ValueError for what it refuses; a TypeError for a lone surrogate
        return json.loads(data)


loads: Callable[[str | bytes], Any] = _loads if FAST else json.loads
"""`json.loads(data)`: the same value, or the same exception, for any `str` or `bytes`."""
