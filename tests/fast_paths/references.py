"""What the fast-path tests draw from, and the plain versions they hold the fast paths to.

JSON text as a server might write it (`JSON_TEXTS`) and an outcome to compare
readers by (`_outcome`); wire citation rows (`ROWS`); event-stream bodies
(`PIECES`, `CANONICAL`, `sse_body`, `cut`), the spec's algorithm over a whole
body (`plain_sse`) and the reader over its chunks (`quick_sse`).
"""

from __future__ import annotations

import codecs
import json
import re
from contextlib import suppress
from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

from silvia_client._sse import EventTooLarge, SSEFields, iter_sse_fields

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
