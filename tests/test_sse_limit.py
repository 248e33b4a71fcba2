"""The event-stream parser's size limit, `max_event_bytes`: lines and event data, sync and async."""

from __future__ import annotations

import re
import tracemalloc
from contextlib import suppress
from itertools import pairwise
from typing import TYPE_CHECKING

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .depth import examples
from .sse_helpers import (
    EventTooLarge,
    SSEParser,
    aiter_sse,
    aiter_sse_fields,
    iter_sse,
    iter_sse_fields,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator

Ev = tuple[str, str, str, "int | None"]  # event, data, id, retry
Outcome = tuple[list[Ev], "int | None"]  # the events read, then the limit passed (or None)

KiB = 1024


def read_sync(chunks: Iterable[bytes], limit: int | None) -> Outcome:
    events: list[Ev] = []
    try:
        for fields in iter_sse_fields(chunks, max_event_bytes=limit):
            events.append(fields)
    except EventTooLarge as error:
        return events, error.limit
    return events, None


def read_objects(chunks: Iterable[bytes], limit: int | None) -> Outcome:
    events: list[Ev] = []
    try:
        for sse in iter_sse(chunks, max_event_bytes=limit):
            events.append((sse.event, sse.data, sse.id, sse.retry))
    except EventTooLarge as error:
        return events, error.limit
    return events, None


def read_parser(chunks: Iterable[bytes], limit: int | None) -> Outcome:
    parser = SSEParser(max_event_bytes=limit)
    events: list[Ev] = []
    try:
        for chunk in chunks:
            events += parser.feed_fields(chunk)
        events += parser.close_fields()
    except EventTooLarge as error:
        return events, error.limit
    return events, None


def read_async(chunks: Iterable[bytes], limit: int | None, *, objects: bool = False) -> Outcome:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async def read() -> Outcome:
        events: list[Ev] = []
        try:
            if objects:
                async for sse in aiter_sse(source(), max_event_bytes=limit):
                    events.append((sse.event, sse.data, sse.id, sse.retry))
            else:
                async for fields in aiter_sse_fields(source(), max_event_bytes=limit):
                    events.append(fields)
        except EventTooLarge as error:
            return events, error.limit
        return events, None

    return anyio.run(read)


def read_async_objects(chunks: Iterable[bytes], limit: int | None) -> Outcome:
    return read_async(chunks, limit, objects=True)


READERS = [read_sync, read_objects, read_parser, read_async, read_async_objects]


def splits(body: bytes) -> Iterator[list[bytes]]:
    """Whole, cut in two at every offset, and one byte per chunk."""
    yield [body]
    for i in range(len(body) + 1):
        yield [body[:i], body[i:]]
    yield [body[i : i + 1] for i in range(len(body))]


def message(data: str) -> Ev:
    return ("message", data, "", None)


# Each case: a body, a limit, and what reading it gives at any chunking: the events
# before the one too large, and the limit if it was passed. A line is counted whole
# (field name included, line end not), an event's data as its `data` lines joined by
# LF, both in bytes of UTF-8.
LIMIT_CASES: list[tuple[str, bytes, int, Outcome]] = [
    # One line: "data: " and 10 bytes is 16, the limit; then one byte more.
    ("line at the limit", b"data: 0123456789\n\n", 16, ([message("0123456789")], None)),
    ("line one over", b"data: a\n\ndata: 0123456789x\n\n", 16, ([message("a")], 16)),
    # Bytes, not characters: "é" is two bytes, "😀" four.
    ("two-byte characters at the limit", "data: éééé\n\n".encode(), 14, ([message("éééé")], None)),
    ("two-byte characters one over", "data: ééééé\n\n".encode(), 15, ([], 15)),
    ("four-byte characters one over", "data: 😀😀\n\n".encode(), 13, ([], 13)),
    # A comment or an unknown field counts as any line does.
    ("comment over", b"data: a\n\n: " + b"p" * 20 + b"\n", 16, ([message("a")], 16)),
    # Many short lines: 8 x "aaa" joined by LF is 31 bytes; each line is 9.
    ("data at the limit", b"data: aaa\n" * 8 + b"\n", 31, ([message("aaa\n" * 7 + "aaa")], None)),
    ("data one over", b"data: x\n\n" + b"data: aaa\n" * 8 + b"\n", 30, ([message("x")], 30)),
    # Over the limit before its blank line arrives, or with none at all.
    ("data over, never ended", b"data: aaa\n" * 8, 30, ([], 30)),
    # The count starts afresh after an event: the second is at the limit, not over.
    ("the next event's data at the limit", b"data: x\n\n" + b"data: aaa\n" * 8 + b"\n", 31,
     ([message("x"), message("aaa\n" * 7 + "aaa")], None)),
    # ...even when the first was still open at the end of a chunk (byte by byte).
    ("counted afresh", b"data: 012345678901\n\ndata: aaaa\ndata: bbbb\ndata: cccc\n\n", 20,
     ([message("012345678901"), message("aaaa\nbbbb\ncccc")], None)),
    # ...and an event after one dispatched is counted from its first line.
    ("counted from the first line", b"data: a\n\ndata: 0123456789\ndata: 0123456789\n", 20,
     ([message("a")], 20)),
    # Other events do not add up: each is within the limit.
    ("events each within", b"data: 0123456789\n\n" * 5, 16, ([message("0123456789")] * 5, None)),
    # A line not ended at all, over the limit: raised, though it would never be read.
    ("unended line over", b"data: a\n\ndata: " + b"z" * 20, 16, ([message("a")], 16)),
    # A line of fewer bytes than a BOM, over the limit: raised, as any line over it.
    ("a short line over a tiny limit", b"ab", 1, ([], 1)),
    # A limit of 0 lets blank lines through, and nothing else.
    ("zero", b"\n\r\n\r", 0, ([], None)),
    ("zero, a comment", b"\n:\n", 0, ([], 0)),
]  # fmt: skip


def test_limit_at_any_chunking() -> None:
    for name, body, limit, outcome in LIMIT_CASES:
        for read in READERS:
            chunkings = list(splits(body))
            if read in (read_async, read_async_objects):  # whole and byte by byte
                chunkings = [chunkings[0], chunkings[-1]]
            for chunks in chunkings:
                assert read(chunks, limit) == outcome, (name, read.__name__, chunks)
            # Without a limit, everything is read.
            assert read([body], None)[1] is None, (name, read.__name__)


def test_the_error_says_the_limit_and_nothing_of_the_data() -> None:
    secret = b"sk-live-0123456789abcdef"
    with pytest.raises(EventTooLarge) as info:
        list(iter_sse_fields([b"data: " + secret * 4 + b"\n\n"], max_event_bytes=64))
    error = info.value
    assert error.limit == 64
    assert "64 bytes" in str(error)
    assert secret.decode() not in str(error) + repr(error)
    # Not a ValueError: no `except ValueError` around the stream catches it by accident.
    assert not isinstance(error, ValueError)
    with pytest.raises(ValueError, match=r"^max_event_bytes must be None or at least 0$"):
        SSEParser(max_event_bytes=-1)


def test_a_parser_past_the_limit_keeps_raising() -> None:
    parser = SSEParser(max_event_bytes=16)
    # The chunk's first event comes out; the line after it is over the limit.
    assert parser.feed_fields(b"data: a\n\ndata: " + b"b" * 20) == [message("a")]
    calls: list[Callable[[], object]] = [lambda: parser.feed_fields(b"\n\n"), parser.close_fields]
    for call in calls:
        with pytest.raises(EventTooLarge) as info:
            call()
        assert info.value.limit == 16


# As the bytes arrive: "endless" as far as a reader can tell; bounded (10,000 chunks),
# so a reader that never raises fails the test at the end rather than hanging.


def counting(chunks: Iterable[bytes], pulled: list[int]) -> Iterator[bytes]:
    for chunk in chunks:
        pulled[0] += 1
        yield chunk


def test_an_unended_line_or_a_long_event_raises_before_its_end_arrives() -> None:
    # 1000-byte chunks of a line that never ends, with a limit of 4500 bytes: the fifth
    # chunk passes it. 100 lines of "aaa" a chunk, 400 bytes of data joined, against
    # 1000: the third. Nothing after is asked for.
    endless_line = [b"data: ok\n\n:", *[b"x" * 1000] * 10_000]
    short_lines = [b"data: ok\n\n", *[b"data: aaa\n" * 100] * 10_000]
    for chunks, limit, pulls in [(endless_line, 4500, 1 + 5), (short_lines, 1000, 1 + 3)]:
        for read in READERS:
            pulled = [0]
            assert read(counting(chunks, pulled), limit) == ([message("ok")], limit)
            assert pulled[0] == pulls, (read.__name__, limit)


# Memory: what the parser keeps is a small multiple of the limit, not what was sent.


def test_memory_is_a_small_multiple_of_the_limit() -> None:
    # 16 MiB offered in 4 KiB chunks against a limit of 64 KiB; the chunk is one
    # object, re-yielded, so only what the parser keeps shows in the peak. Short lines
    # are kept as one string a chunk: 3-character lines, each its own string object of
    # about 50 bytes, would hold over 10 times the limit.
    limit = 64 * KiB
    for name, first, piece, data_share in [
        ("endless line", b":", b"x" * 4 * KiB, 1),
        ("endless line of é", b":", "é".encode() * 2 * KiB, 1),
        ("endless line of 😀", b":", "😀".encode() * KiB, 1),
        ("short lines", b"", b"data: aaa\n" * 410, 4 / 10),  # 4 bytes of data in each 10
    ]:
        for read in (read_sync, read_async):
            sent = [0]

            def chunks(
                first: bytes = first, piece: bytes = piece, sent: list[int] = sent
            ) -> Iterator[bytes]:
                yield first
                while sent[0] < 16 * 1024 * KiB:
                    sent[0] += len(piece)
                    yield piece

            tracemalloc.start()
            try:
                tracemalloc.reset_peak()
                before, _ = tracemalloc.get_traced_memory()
                outcome = read(chunks(), limit)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert outcome == ([], limit), (name, read.__name__)
            assert peak - before < 4 * limit, (name, read.__name__, peak - before)
            assert sent[0] <= limit / data_share + len(piece), (name, read.__name__)  # stopped


# Property: the limit by the book. Split the whole text into lines; a line over the
# limit, a `data` line that takes its event's data (joined by LF) over it, or the
# unended rest over it stops the reading there, after the events before it.

BOOK_PIECES = ["data: ", "data:", "event: ", "id: ", ": ", "a", "bb", "é", "😀", "\n", "\r"]
BOOK_PIECES += ["\r\n", "\n\n", "x" * 9, "retry: ", "7", "id", "\0", "data", ":"]


def by_the_book(body: bytes, limit: int) -> Outcome:
    *lines, rest = re.split("\r\n|\r|\n", body.decode("utf-8", "replace"))
    events: list[Ev] = []
    data: list[str] | None = None
    name, last_id, retry = "", "", None
    for line in lines:
        if len(line.encode()) > limit:
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
            if len("\n".join(data).encode()) > limit:
                return events, limit
        elif field == "event":
            name = value
        elif field == "id" and "\0" not in value:
            last_id = value
        elif field == "retry":
            with suppress(ValueError):  # kept when `int` reads it (httpx-sse's rule)
                retry = int(value)
    if len(rest.encode()) > limit:
        return events, limit
    return events, None


@settings(max_examples=examples(100), deadline=None)
@given(
    pieces=st.lists(st.sampled_from(BOOK_PIECES), max_size=30),
    limit=st.integers(0, 24),
    data=st.data(),
)
def test_limit_is_read_by_the_book_cut_anywhere(
    pieces: list[str], limit: int, data: st.DataObject
) -> None:
    body = "".join(pieces).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    chunks = [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]
    expected = by_the_book(body, limit)
    assert read_sync([body], limit) == expected
    assert read_sync(chunks, limit) == expected
    assert read_parser(chunks, limit) == expected
