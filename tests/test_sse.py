"""The event-stream parser: the WHATWG rules at any chunking (its size limit: test_sse_limit).

Every case is read whole, cut in two at every offset and byte by byte, through each
way in: `SSEParser.feed`/`close`, `iter_sse`, and `aiter_sse` (separate code paths).
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING

import anyio
import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from .depth import examples
from .sse_helpers import SSEParser, aiter_sse, iter_sse

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

    from httpx_sse import ServerSentEvent

Ev = tuple[str, str, str, "int | None"]  # event, data, id, retry

BOM = b"\xef\xbb\xbf"


def tuples(events: Iterable[ServerSentEvent]) -> list[Ev]:
    return [(e.event, e.data, e.id, e.retry) for e in events]


def via_parser(chunks: Iterable[bytes]) -> list[Ev]:
    parser = SSEParser()
    events: list[ServerSentEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return tuples(events)


def via_iter(chunks: Iterable[bytes]) -> list[Ev]:
    return tuples(iter_sse(chunks))


def via_aiter(chunks: Iterable[bytes]) -> list[Ev]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async def read() -> list[Ev]:
        return tuples([e async for e in aiter_sse(source())])

    return anyio.run(read)


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
    # No phantom events.
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


def test_each_case_at_any_chunking_through_each_way_in() -> None:
    for name, body, expected in CASES:
        for chunks in splits(body):
            assert via_iter(chunks) == expected, (name, chunks)
            assert via_parser(chunks) == expected, (name, chunks)
        for chunks in ([body], [body[i : i + 1] for i in range(len(body))]):
            assert via_aiter(chunks) == expected, (name, "async", chunks)


def test_events_come_out_as_soon_as_complete() -> None:
    parser = SSEParser()
    assert tuples(parser.feed(b"data: a\n")) == []
    assert tuples(parser.feed(b"\ndata: b")) == [m("a")]
    assert tuples(parser.feed(b"\n\n")) == [m("b")]
    # A CR ends the blank line that dispatches; no need to wait for the next byte.
    assert tuples(parser.feed(b"data: c\n\r")) == [m("c")]
    # An LF right after it is the rest of a CRLF, not a second blank line.
    assert parser.feed(b"\ndata: d\n") == []
    assert tuples(parser.feed(b"\n")) == [m("d")]
    assert parser.close() == []


def test_a_declared_charset_is_ignored() -> None:
    headers = {"content-type": "text/event-stream; charset=latin-1"}
    response = httpx.Response(200, headers=headers, content="data: €ü日\n\n".encode())
    assert via_iter(response.iter_bytes()) == [m("€ü日")]

    async def body() -> AsyncIterator[bytes]:
        for chunk in (b"data: \xe2\x82", b"\xac\r", b"\n\r\n"):
            yield chunk

    async def read() -> list[Ev]:
        response = httpx.Response(200, headers=headers, content=body())
        return tuples([e async for e in aiter_sse(response.aiter_bytes())])

    assert anyio.run(read) == [m("€")]


# Property: any events, any line endings and comments, any chunking.

no_newlines = st.characters(codec="utf-8", exclude_characters="\r\n")
names = st.text(no_newlines, max_size=8)
datas = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=20)
comments = st.text(no_newlines, max_size=8).map(lambda text: ":" + text)


@settings(max_examples=examples(150), deadline=None)
@given(
    events=st.lists(st.tuples(names, datas), max_size=6),
    bom=st.booleans(),
    data=st.data(),
)
def test_round_trip(events: list[tuple[str, str]], bom: bool, data: st.DataObject) -> None:
    lines: list[str] = []

    def maybe_comment(between_events: bool) -> None:
        if data.draw(st.booleans()):
            lines.append(data.draw(comments))
            # Inside an event a blank line would end it, so a keep-alive block
            # (comment + blank line) only goes between events.
            if between_events and data.draw(st.booleans()):
                lines.append("")

    for name, value in events:
        maybe_comment(between_events=True)
        if name or data.draw(st.booleans()):
            # `event:` without the space too, where the name does not start with one.
            tight = not name.startswith(" ") and data.draw(st.booleans())
            lines.append(f"event:{name}" if tight else f"event: {name}")
        for part in value.split("\n"):
            maybe_comment(between_events=False)
            # Without the space, a value starting with one would lose it.
            tight = not part.startswith(" ") and data.draw(st.booleans())
            lines.append(f"data:{part}" if tight else f"data: {part}")
        lines.append("")
    maybe_comment(between_events=True)

    text = ""
    previous = ""
    for line in lines:
        ending = data.draw(st.sampled_from(["\n", "\r", "\r\n"]))
        if previous == "\r" and not line and ending == "\n":
            ending = "\r\n"  # CR + blank LF line would read as one CRLF
        text += line + ending
        previous = ending
    body = (BOM if bom else b"") + text.encode()

    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    bounds = [0, *cuts, len(body)]
    chunks = [body[a:b] for a, b in pairwise(bounds)]

    expected = [(name or "message", value) for name, value in events]
    assert [(e.event, e.data) for e in iter_sse(chunks)] == expected
    assert [(e[0], e[1]) for e in via_parser(chunks)] == expected


# Property: lines are what splitting the whole text on CRLF, CR and LF gives,
# wherever the bytes are cut. Every line is a `data` line or blank, so each is
# seen in the events: a `data` line's value in the data, a blank line as an
# event's end. Where a CR ends one line and an LF the next, blank, one, the
# whole text reads a CRLF: one line fewer than were written.

line_contents = st.one_of(
    st.just(""), st.text(no_newlines, max_size=8).map(lambda value: "data:" + value)
)


def events_of_lines(lines: list[str]) -> list[str]:
    """The data of the events that `data` and blank lines make, by the book."""
    events: list[str] = []
    data: list[str] = []
    for line in lines:
        if line:
            value = line.removeprefix("data:")
            data.append(value.removeprefix(" "))
        elif data:
            events.append("\n".join(data))
            data = []
    return events


@settings(max_examples=examples(200), deadline=None)
@given(
    written=st.lists(st.tuples(line_contents, st.sampled_from(["\r", "\n", "\r\n"]))),
    unended=line_contents,
    data=st.data(),
)
def test_lines_are_the_whole_text_split_on_crlf_cr_and_lf(
    written: list[tuple[str, str]], unended: str, data: st.DataObject
) -> None:
    text = "".join(line + ending for line, ending in written) + unended
    body = text.encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    chunks = [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]

    lines = re.split("\r\n|\r|\n", text)[:-1]  # the last, unended, is never read
    expected = [("message", value) for value in events_of_lines(lines)]
    assert [(e.event, e.data) for e in iter_sse(chunks)] == expected
    assert [(e[0], e[1]) for e in via_parser(chunks)] == expected
