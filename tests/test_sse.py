"""The wire's two decoders (`_sse.py`): SSE by the WHATWG rules, and JSON as the wire carries it.

`SSEDecoder`: each case read whole, cut at every offset and byte by byte, and a property
against a reference reading (`by_the_book`). JSON: `most_values`, counted before decoding,
is never below the values decoding builds; `loads` keeps every number's exact value.
"""

from __future__ import annotations

import itertools
import json
import re
import tracemalloc
from contextlib import suppress
from decimal import Decimal
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from silvia_client._sse import EventTooLarge, SSEDecoder, holds_infinity, loads, most_values

from .depth import examples
from .sse_helpers import iter_sse

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from httpx_sse import ServerSentEvent

Ev = tuple[str, str, str, "int | None"]  # event, data, id, retry
Outcome = tuple[list[Ev], "int | None"]  # the events read, then the limit passed (or None)

BOM = b"\xef\xbb\xbf"
KiB = 1024


def tuples(events: Iterable[ServerSentEvent]) -> list[Ev]:
    return [(e.event, e.data, e.id, e.retry) for e in events]


def read(chunks: Iterable[bytes], limit: int | None = None) -> Outcome:
    """What the stream's loop gets: the events, and the limit if one was passed."""
    events: list[Ev] = []
    try:
        for sse in iter_sse(chunks, max_event_bytes=limit):
            events += tuples([sse])
    except EventTooLarge as error:
        return events, error.limit
    return events, None


def splits(body: bytes) -> Iterator[list[bytes]]:
    """Whole, cut in two at every offset, and one byte per chunk."""
    yield [body]
    for i in range(len(body) + 1):
        yield [body[:i], body[i:]]
    yield [body[i : i + 1] for i in range(len(body))]


def m(data: str, last_id: str = "", retry: int | None = None, event: str = "message") -> Ev:
    return (event, data, last_id, retry)


# Every rule at once. The BOM makes the first field name unreadable if kept; the
# `id:` makes httpx-sse dispatch a phantom event at every later comment + blank line.
STREAM = (
    BOM + b": opening comment\r\nevent: text\n" + 'data: {"text": "h€llo"}\r\n\r\n'.encode()
    + "id: 7\rdata: 日本\rdata:  one space kept\r\r: ping\n\nevent: ghost\n\ndata\n\n".encode()
    + "retry: 1500\ndata:\ndata: 🎉\ufeff\n\nretry: 20\n\n".encode()
    + b"event: citation\r\ndata: x\r\n\r\nevent: tail\ndata: never dispatched\n"
)  # fmt: skip
# (name, body, the events it gives at any chunking)
CASES: list[tuple[str, bytes, list[Ev]]] = [
    ("every rule", STREAM, [m('{"text": "h€llo"}', event="text"), m("日本\n one space kept", "7"),
                            m("", "7"), m("\n🎉\ufeff", "7", 1500), m("x", "7", event="citation")]),
    ("CRLF split across chunks is one line ending", b"data: a\r\ndata: b\r\n\r\n", [m("a\nb")]),
    # Format cases of web-platform-tests (eventsource/format-*). Their test server
    # ends a message with "\n\n" unless the test asks for no newline.
    ("wpt format-comments", b"data:1\r:\0\n:\r\ndata:2\n:" + b"x" * 2048
     + b"\rdata:3\n:data:fail\r:" + b"x" * 2048 + b"\ndata:4\n\n\n", [m("1\n2\n3\n4")]),
    ("wpt format-field-data", b"data:\n\ndata\ndata\n\ndata:test\n\n\n",
     [m(""), m("\n"), m("test")]),
    ("wpt format-data-before-final-empty-line", b"retry:1000\ndata:test1\n\nid:test\ndata:test2",
     [m("test1", retry=1000)]),
    ("wpt format-null-character", b"data:\0\n\n\n\n", [m("\0")]),
    ("wpt format-field-event", b"event:test\ndata:x\n\ndata:x\n\n", [m("x", event="test"), m("x")]),
    ("wpt format-field-event-empty", b"event: \ndata:data\n\n\n", [m("data")]),
    ("wpt format-bom-2", BOM + BOM + b"data:1\n\ndata:2\n\ndata:3\n\n\n", [m("2"), m("3")]),
    ("wpt format-field-id-null", b"id:\0\0\ndata:hello\n\nid:\ndata:hello\n\n", [m("hello")] * 2),
    ("wpt format-utf-8", "data:ok\u2026\n\n".encode(), [m("ok\u2026")]),
    # Retry: kept when `int` reads it (httpx-sse's rule), else ignored, and for one event only.
    ("retry bogus after good", b"retry:3000\nretry:1000x\ndata:x\n\n", [m("x", retry=3000)]),
    ("retry bogus alone", b"retry: soon\ndata:x\n\ndata:y\n\n", [m("x"), m("y")]),
    ("retry empty", b"retry\ndata:test\n\n", [m("test")]),
    ("retry what int reads", b"retry: +15\ndata:a\n\nretry: 1_000\ndata:b\n\n",
     [m("a", retry=15), m("b", retry=1000)]),
    ("retry without data does not leak", b"retry: 10\n\ndata: y\n\n", [m("y")]),
    # One leading BOM is dropped; a second is part of the first line's field name.
    ("leading BOM", BOM + b"event: a\ndata: 1\n\n", [m("1", event="a")]),
    ("two leading BOMs", BOM + BOM + b"event: a\ndata: 1\n\n", [m("1")]),
    ("BOM after the start is content", b"data: 1\n\ndata: " + BOM + b"x" + BOM + b"\n\n",
     [m("1"), m("\ufeffx\ufeff")]),
    # UTF-8 whatever the bytes; what is not UTF-8 becomes U+FFFD.
    ("UTF-8", "event: €\ndata: 日本 😀\n\n".encode(), [m("日本 😀", event="€")]),
    ("invalid UTF-8", b"data: a\xffb\xe2\x82\n\n", [m("a\ufffdb\ufffd")]),
    ("truncated UTF-8 at the end", b"data: a\n\n\xe2\x82", [m("a")]),
    ("comment after id", b"id: 1\ndata: a\n\n: ping\n\n:\n\ndata: b\n\n",
     [m("a", "1"), m("b", "1")]),
    ("id alone sticks", b"id: 9\n\ndata: a\n\n", [m("a", "9")]),
    ("event without data does not leak", b"event: x\n\ndata: y\n\n", [m("y")]),
    ("empty data lines count", b"event: e\ndata:\n\nevent: e\ndata: \n\nevent: e\ndata\n\n",
     [m("", event="e")] * 3),
    ("a field merely starting with data", b"event: e\ndatum: 1\ndata_: 2\n\n", []),
    ("keep-alive comments alone", b": ping\n\n" * 5 + b":\r\n\r\n: ping\r\r", []),
    # End of stream: an event not ended by a blank line is dropped.
    ("unended after LF", b"data: a\n\ndata: b\n", [m("a")]),
    ("unended", b"data: a\n\ndata: b", [m("a")]),
    ("unended after CR", b"data: a\n\ndata: b\r", [m("a")]),
    ("a final CR is a blank line", b"data: a\r\r", [m("a")]),
    ("a final CR after LF is a blank line", b"data: a\n\r", [m("a")]),
]  # fmt: skip


# (name, body, limit, what it gives at any chunking: the events before the one too large,
# and the limit if passed). A line counts whole but its end, an event's data as its
# `data` lines joined by LF, both in bytes of UTF-8.
LIMIT_CASES: list[tuple[str, bytes, int, Outcome]] = [
    # One line: "data: " and 10 bytes is 16, the limit; then one byte more.
    ("line at the limit", b"data: 0123456789\n\n", 16, ([m("0123456789")], None)),
    ("line one over", b"data: a\n\ndata: 0123456789x\n\n", 16, ([m("a")], 16)),
    ("two-byte characters at the limit", "data: éééé\n\n".encode(), 14, ([m("éééé")], None)),
    ("two-byte characters one over", "data: ééééé\n\n".encode(), 15, ([], 15)),
    ("four-byte characters one over", "data: 😀😀\n\n".encode(), 13, ([], 13)),
    ("comment over", b"data: a\n\n: " + b"p" * 20 + b"\n", 16, ([m("a")], 16)),
    # Many short lines: 8 x "aaa" joined by LF is 31 bytes; each line is 9.
    ("data at the limit", b"data: aaa\n" * 8 + b"\n", 31, ([m("aaa\n" * 7 + "aaa")], None)),
    ("data one over", b"data: x\n\n" + b"data: aaa\n" * 8 + b"\n", 30, ([m("x")], 30)),
    ("data over, never ended", b"data: aaa\n" * 8, 30, ([], 30)),
    # The count starts afresh after an event: the second is at the limit, not over.
    ("the next event's data at the limit", b"data: x\n\n" + b"data: aaa\n" * 8 + b"\n", 31,
     ([m("x"), m("aaa\n" * 7 + "aaa")], None)),
    # ...even when the first was still open at the end of a chunk (byte by byte).
    ("counted afresh", b"data: 012345678901\n\ndata: aaaa\ndata: bbbb\ndata: cccc\n\n", 20,
     ([m("012345678901"), m("aaaa\nbbbb\ncccc")], None)),
    # ...and an event after one dispatched is counted from its first line.
    ("counted from the first line", b"data: a\n\ndata: 0123456789\ndata: 0123456789\n", 20,
     ([m("a")], 20)),
    ("events each within", b"data: 0123456789\n\n" * 5, 16, ([m("0123456789")] * 5, None)),
    # A line not ended at all, over the limit: raised, though it would never be read.
    ("unended line over", b"data: a\n\ndata: " + b"z" * 20, 16, ([m("a")], 16)),
    # A line of fewer bytes than a BOM, over the limit: raised, as any line over it.
    ("a short line over a tiny limit", b"ab", 1, ([], 1)),
    ("zero", b"\n\r\n\r", 0, ([], None)),
    ("zero, a comment", b"\n:\n", 0, ([], 0)),
]  # fmt: skip


def test_each_case_at_any_chunking() -> None:
    cases = [(name, body, None, (events, None)) for name, body, events in CASES]
    for name, body, limit, outcome in [*cases, *LIMIT_CASES]:
        for chunks in splits(body):
            assert read(chunks, limit) == outcome, (name, chunks)
        assert read([body])[1] is None, name  # without a limit, everything is read


def test_events_come_out_as_soon_as_complete() -> None:
    parser = SSEDecoder()
    assert tuples(parser.feed(b"data: a\n")) == []
    assert tuples(parser.feed(b"\ndata: b")) == [m("a")]
    assert tuples(parser.feed(b"\n\n")) == [m("b")]
    # A CR ends the blank line that dispatches; no need to wait for the next byte.
    assert tuples(parser.feed(b"data: c\n\r")) == [m("c")]
    # An LF right after it is the rest of a CRLF, not a second blank line.
    assert parser.feed(b"\ndata: d\n") == []
    assert tuples(parser.feed(b"\n")) == [m("d")]
    assert parser.close() == []


def test_the_error_says_the_limit_and_nothing_of_the_data_and_keeps_being_raised() -> None:
    secret = b"sk-live-0123456789abcdef"
    parser = SSEDecoder(max_event_bytes=64)
    # The chunk's first event comes out; the line after it is over the limit.
    assert tuples(parser.feed(b"data: a\n\ndata: " + secret * 4)) == [m("a")]
    for more in (b"\n\n", None):
        with pytest.raises(EventTooLarge) as info:
            parser.feed(more) if more else parser.close()
        error = info.value
        assert error.limit == 64
        assert "64 bytes" in str(error)
        assert secret.decode() not in str(error) + repr(error)
        # Not a ValueError: no `except ValueError` around the stream catches it by accident.
        assert not isinstance(error, ValueError)
    with pytest.raises(ValueError, match=r"^max_event_bytes must be None or at least 0$"):
        SSEDecoder(max_event_bytes=-1)


def counting(chunks: Iterable[bytes], pulled: list[int]) -> Iterator[bytes]:
    for chunk in chunks:
        pulled[0] += 1
        yield chunk


def test_a_long_line_or_event_stops_the_read_there_in_a_small_multiple_of_the_limit() -> None:
    # 16 MiB in 4 KiB chunks (one object, re-yielded: the peak is what the parser keeps)
    # against 64 KiB: raised at the chunk that passes it, nothing after it asked for. Short
    # lines kept as a string each would hold 10 times the limit.
    limit = 64 * KiB
    for name, first, piece, pulls in [
        ("endless line", b":", b"x" * 4 * KiB, 1 + 16),
        ("endless line of é", b":", "é".encode() * 2 * KiB, 1 + 16),
        ("endless line of 😀", b":", "😀".encode() * KiB, 1 + 16),
        ("short lines", b"", b"data: aaa\n" * 410, 1 + 40),  # 4 bytes of data in each 10
    ]:
        pulled = [0]
        rest = itertools.repeat(piece, 16 * 1024 * KiB // len(piece))
        chunks = counting(itertools.chain([b"data: ok\n\n" + first], rest), pulled)
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            before, _ = tracemalloc.get_traced_memory()
            outcome = read(chunks, limit)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert outcome == ([m("ok")], limit), name
        assert peak - before < 4 * limit, (name, peak - before)
        assert pulled[0] == pulls, name


BOOK_PIECES = ["data: ", "data:", "event: ", "event:", "id: ", ": ", "a", "bb", "é", "😀"]
BOOK_PIECES += ["\n", "\r", "\r\n", "\n\n", "x" * 9, "retry: ", "7", "id", "\0", "data", ":"]
no_newlines = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=6)


def by_the_book(body: bytes, limit: int | None) -> Outcome:
    """Lines split on CRLF, CR, LF (one BOM dropped; the unended rest never read); a line,
    an event's data or the rest over `limit` stops the reading after the events before."""
    *lines, rest = re.split("\r\n|\r|\n", body.decode("utf-8-sig", "replace"))
    bound = float("inf") if limit is None else limit
    events: list[Ev] = []
    data: list[str] | None = None
    name, last_id, retry = "", "", None
    for line in lines:
        if len(line.encode()) > bound:
            return events, limit
        if not line:
            if data is not None:
                events.append((name or "message", "\n".join(data), last_id, retry))
            data, name, retry = None, "", None
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data = [*(data or []), value]
            if len("\n".join(data).encode()) > bound:
                return events, limit
        elif field == "event":
            name = value
        elif field == "id" and "\0" not in value:
            last_id = value
        elif field == "retry":
            with suppress(ValueError):  # kept when `int` reads it (httpx-sse's rule)
                retry = int(value)
    if len(rest.encode()) > bound:
        return events, limit
    return events, None


@settings(max_examples=examples(300), deadline=None)
@given(
    pieces=st.lists(st.one_of(st.sampled_from(BOOK_PIECES), no_newlines), max_size=30),
    bom=st.booleans(),
    limit=st.none() | st.integers(0, 24),
    data=st.data(),
)
@example(pieces=["data: a", "\r", "\n", "\n"], bom=True, limit=None, data=None)
def test_the_decoder_reads_by_the_book_cut_anywhere(
    pieces: list[str], bom: bool, limit: int | None, data: st.DataObject | None
) -> None:
    body = (BOM if bom else b"") + "".join(pieces).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8))) if data else []
    chunks = [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]
    expected = by_the_book(body, limit)
    assert read([body], limit) == expected
    assert read(chunks, limit) == expected


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


def test_the_count_of_tiny_nonempty_values_is_exact() -> None:
    for piece, each in [(b"[0]", 2), (b'"ab"', 1), (b"7", 1), (b'{"k":0}', 3), (b"[[0]]", 3)]:
        body = b"[" + b",".join([piece] * 1000) + b"]"
        assert values(json.loads(body)) == most_values(body) == 1 + 1000 * each, piece
        assert most_values(body.decode()) == 1 + 1000 * each  # an event's data: text


HUGE = "9" * 5000  # past the digits `json.loads` reads (4,300), and a float's range


def test_loads_keeps_a_huge_integer_or_a_number_past_a_floats_range_as_its_exact_decimal() -> None:
    huge = '{"n": HUGE, "m": -HUGE, "small": 12}'.replace("HUGE", HUGE)
    text = "[1e400, -2.5E+999, 1.5, 1e-400]"
    for data in huge, text, huge.encode(), text.encode():  # an event's data, a history body
        got = loads(data)
        if isinstance(got, dict):
            assert got == {"n": Decimal(HUGE), "m": Decimal("-" + HUGE), "small": 12}
            assert str(got["n"]) == HUGE
            assert type(got["small"]) is int
        else:
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
