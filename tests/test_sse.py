"""The event-stream parser: the WHATWG rules at any chunking (its size limit: test_sse_limit)."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .depth import examples
from .sse_helpers import SSEParser, aiter_sse, iter_sse

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

    from httpx_sse import ServerSentEvent

Ev = tuple[str, str, str, "int | None"]  # event, data, id, retry

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tuples(events: Iterable[ServerSentEvent]) -> list[Ev]:
    return [(e.event, e.data, e.id, e.retry) for e in events]


def via_parser(chunks: Iterable[bytes]) -> list[Ev]:
    # `feed`/`close` and `iter_sse` are separate code paths; check both.
    parser = SSEParser()
    events: list[ServerSentEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return tuples(events)


def via_iter(chunks: Iterable[bytes]) -> list[Ev]:
    return tuples(iter_sse(chunks))


async def via_aiter(chunks: Iterable[bytes]) -> list[Ev]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return tuples([e async for e in aiter_sse(source())])


def splits(body: bytes) -> Iterator[list[bytes]]:
    """Whole, cut in two at every offset, and one byte per chunk."""
    yield [body]
    for i in range(len(body) + 1):
        yield [body[:i], body[i:]]
    yield [body[i : i + 1] for i in range(len(body))]


# Every rule at once. The BOM makes the first field name unreadable if kept; the
# `id:` makes httpx-sse dispatch a phantom event at every later comment + blank line.
STREAM = (
    BOM
    + b": opening comment\r\n"
    + b"event: text\n"
    + 'data: {"text": "h€llo"}\r\n'.encode()
    + b"\r\n"
    + b"id: 7\r"
    + "data: 日本\r".encode()
    + b"data:  one space kept\r"
    + b"\r"
    + b": ping\n"
    + b"\n"
    + b"event: ghost\n"
    + b"\n"
    + b"data\n"
    + b"\n"
    + b"retry: 1500\n"
    + b"data:\n"
    + "data: 🎉\ufeff\n".encode()
    + b"\n"
    + b"retry: 20\n"
    + b"\n"
    + b"event: citation\r\n"
    + b"data: x\r\n"
    + b"\r\n"
    + b"event: tail\n"
    + b"data: never dispatched\n"
)
EXPECTED: list[Ev] = [
    ("text", '{"text": "h€llo"}', "", None),
    ("message", "日本\n one space kept", "7", None),
    ("message", "", "7", None),
    ("message", "\n🎉\ufeff", "7", 1500),
    ("citation", "x", "7", None),
]


def test_stream_whole_cut_anywhere_and_byte_by_byte() -> None:
    for chunks in splits(STREAM):
        assert via_iter(chunks) == EXPECTED, chunks
        assert via_parser(chunks) == EXPECTED, chunks


@pytest.mark.anyio
async def test_async_twin_gives_the_same_events() -> None:
    for chunks in splits(STREAM):
        assert await via_aiter(chunks) == EXPECTED, chunks


def test_events_come_out_as_soon_as_complete() -> None:
    parser = SSEParser()
    assert tuples(parser.feed(b"data: a\n")) == []
    assert tuples(parser.feed(b"\ndata: b")) == [("message", "a", "", None)]
    assert tuples(parser.feed(b"\n\n")) == [("message", "b", "", None)]
    assert parser.close() == []


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    # Read as CR + LF, the LF would be a blank line dispatching "a" alone.
    chunks = [b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]
    assert via_parser(chunks) == [("message", "a\nb", "", None)]
    assert via_iter(chunks) == [("message", "a\nb", "", None)]


# Format cases of web-platform-tests (eventsource/format-*), as bodies. Their test
# server ends a message with "\n\n" unless the test asks for no newline.

WPT_FORMAT_CASES: list[tuple[str, bytes, list[Ev]]] = [
    (
        "format-comments",
        b"data:1\r:\0\n:\r\ndata:2\n:" + b"x" * 2048 + b"\rdata:3\n:data:fail\r:"
        + b"x" * 2048 + b"\ndata:4\n\n\n",
        [("message", "1\n2\n3\n4", "", None)],
    ),
    (
        "format-field-data",
        b"data:\n\ndata\ndata\n\ndata:test\n\n\n",
        [("message", "", "", None), ("message", "\n", "", None), ("message", "test", "", None)],
    ),
    (
        "format-data-before-final-empty-line",
        b"retry:1000\ndata:test1\n\nid:test\ndata:test2",
        [("message", "test1", "", 1000)],
    ),
    ("format-null-character", b"data:\0\n\n\n\n", [("message", "\0", "", None)]),
    (
        "format-field-event",
        b"event:test\ndata:x\n\ndata:x\n\n",
        [("test", "x", "", None), ("message", "x", "", None)],
    ),
    ("format-field-event-empty", b"event: \ndata:data\n\n\n", [("message", "data", "", None)]),
    (
        "format-bom-2",
        BOM + BOM + b"data:1\n\ndata:2\n\ndata:3\n\n\n",
        [("message", "2", "", None), ("message", "3", "", None)],
    ),
    (
        "format-field-id-null",
        b"id:\0\0\ndata:hello\n\nid:\ndata:hello\n\n",
        [("message", "hello", "", None), ("message", "hello", "", None)],
    ),
    (
        "format-utf-8",
        "data:ok\u2026\n\n".encode(),
        [("message", "ok\u2026", "", None)],
    ),
]  # fmt: skip


def test_web_platform_tests_format_cases() -> None:
    for name, body, expected in WPT_FORMAT_CASES:
        for chunks in splits(body):
            assert via_iter(chunks) == expected, (name, chunks)
            assert via_parser(chunks) == expected, (name, chunks)


@pytest.mark.anyio
async def test_web_platform_tests_format_cases_async() -> None:
    for name, body, expected in WPT_FORMAT_CASES:
        for chunks in splits(body):
            assert await via_aiter(chunks) == expected, (name, chunks)


# Retry: kept when `int` reads it (httpx-sse's rule), else ignored, and for one event only.

RETRY_CASES: list[tuple[str, bytes, list[Ev]]] = [
    ("bogus after good", b"retry:3000\nretry:1000x\ndata:x\n\n", [("message", "x", "", 3000)]),
    ("bogus alone", b"retry: soon\ndata:x\n\ndata:y\n\n",
     [("message", "x", "", None), ("message", "y", "", None)]),
    ("empty", b"retry\ndata:test\n\n", [("message", "test", "", None)]),
    ("what int reads", b"retry: +15\ndata:a\n\nretry: 1_000\ndata:b\n\n",
     [("message", "a", "", 15), ("message", "b", "", 1000)]),
]  # fmt: skip


def test_a_retry_int_cannot_read_is_ignored() -> None:
    for name, body, expected in RETRY_CASES:
        for chunks in splits(body):
            assert via_iter(chunks) == expected, (name, chunks)
            assert via_parser(chunks) == expected, (name, chunks)


# BOM


def test_leading_bom_is_dropped() -> None:
    for chunks in [
        [BOM + b"event: a\ndata: 1\n\n"],
        [BOM[:1], BOM[1:] + b"event: a\ndata: 1\n\n"],
        [BOM[:2], BOM[2:] + b"event: a\ndata: 1\n\n"],
        [BOM[:1], BOM[1:2], BOM[2:], b"event: a\ndata: 1\n\n"],
    ]:
        assert via_parser(chunks) == [("a", "1", "", None)], chunks
        assert via_iter(chunks) == [("a", "1", "", None)], chunks


def test_only_one_leading_bom_is_dropped() -> None:
    # The second BOM is part of the first line, making its field name unknown.
    body = BOM + BOM + b"event: a\ndata: 1\n\n"
    assert via_iter([body]) == [("message", "1", "", None)]


def test_bom_after_the_start_is_content() -> None:
    body = b"data: 1\n\n" + b"data: " + BOM + b"x" + BOM + b"\n\n"
    assert via_iter([body]) == [("message", "1", "", None), ("message", "\ufeffx\ufeff", "", None)]


# Charset


def test_body_is_utf8_whatever_its_bytes() -> None:
    body = "event: €\ndata: 日本 😀\n\n".encode()
    for chunks in ([body], [body[i : i + 1] for i in range(len(body))]):
        assert via_iter(chunks) == [("€", "日本 😀", "", None)]


def test_invalid_utf8_becomes_replacement_character() -> None:
    body = b"data: a\xffb\xe2\x82\n\n"
    assert via_iter([body]) == [("message", "a\ufffdb\ufffd", "", None)]
    # Truncated at end of stream: nothing to dispatch, and no error.
    assert via_parser([b"data: a\n\n\xe2\x82"]) == [("message", "a", "", None)]


def test_declared_charset_is_ignored() -> None:
    response = httpx.Response(
        200,
        headers={"content-type": "text/event-stream; charset=latin-1"},
        content="data: €ü日\n\n".encode(),
    )
    assert via_iter(response.iter_bytes()) == [("message", "€ü日", "", None)]


# No phantom events


def test_comment_after_id_dispatches_nothing() -> None:
    body = b"id: 1\ndata: a\n\n: ping\n\n:\n\ndata: b\n\n"
    assert via_iter([body]) == [("message", "a", "1", None), ("message", "b", "1", None)]


def test_id_alone_dispatches_nothing_but_sticks() -> None:
    assert via_iter([b"id: 9\n\ndata: a\n\n"]) == [("message", "a", "9", None)]


def test_event_without_data_dispatches_nothing_and_does_not_leak() -> None:
    body = b"event: x\n\ndata: y\n\n"
    assert via_parser([body]) == [("message", "y", "", None)]
    assert via_iter([body]) == [("message", "y", "", None)]


def test_retry_without_data_dispatches_nothing_and_does_not_leak() -> None:
    assert via_iter([b"retry: 10\n\ndata: y\n\n"]) == [("message", "y", "", None)]


def test_empty_data_line_counts() -> None:
    for line in [b"data:", b"data: ", b"data"]:
        assert via_iter([b"event: e\n" + line + b"\n\n"]) == [("e", "", "", None)], line


def test_field_merely_starting_with_data_is_not_data() -> None:
    assert via_iter([b"event: e\ndatum: 1\ndata_: 2\n\n"]) == []


def test_keep_alive_comments_alone_produce_nothing() -> None:
    assert via_iter([b": ping\n\n" * 5, b":\r\n\r\n: ping\r\r"]) == []


# End of stream


def test_event_not_ended_by_blank_line_is_dropped() -> None:
    for body in (b"data: a\n\ndata: b\n", b"data: a\n\ndata: b", b"data: a\n\ndata: b\r"):
        assert via_parser([body]) == [("message", "a", "", None)], body
        assert via_iter([body]) == [("message", "a", "", None)], body


def test_cr_ends_its_line_at_once_and_a_following_lf_is_skipped() -> None:
    parser = SSEParser()
    # The CR ends the blank line that dispatches; no need to wait for the next byte.
    assert tuples(parser.feed(b"data: a\n\r")) == [("message", "a", "", None)]
    # An LF right after it is the rest of a CRLF, not a second blank line.
    assert parser.feed(b"\ndata: b\n") == []
    assert tuples(parser.feed(b"\n")) == [("message", "b", "", None)]
    assert parser.close() == []
    assert via_iter([b"data: a\r\r"]) == [("message", "a", "", None)]


@pytest.mark.anyio
async def test_async_final_cr_is_a_blank_line() -> None:
    assert await via_aiter([b"data: a\n", b"\r"]) == [("message", "a", "", None)]


@pytest.mark.anyio
async def test_async_over_an_httpx_response() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"data: \xe2\x82"
        yield b"\xac\r"
        yield b"\n\r\n"

    response = httpx.Response(
        200, headers={"content-type": "text/event-stream; charset=latin-1"}, content=body()
    )
    events = [e async for e in aiter_sse(response.aiter_bytes())]
    assert tuples(events) == [("message", "€", "", None)]


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
