"""The SSE reader, over any body cut anywhere, reads as the spec's algorithm reads the whole."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client import _sse_reader
from silvia_client._sse import EventTooLarge, SSEFields, SSEParser, iter_sse_fields

from ..depth import examples
from .references import (
    cut,
    plain_sse,
    quick_sse,
    sse_body,
)


@settings(max_examples=examples(600))
@given(st.data())
def test_sse_reads_as_the_plain_algorithm(data: st.DataObject) -> None:
    # The one loop (`_sse_reader.read_events`): any body, cut anywhere, with or without a
    # limit, reads as the spec's algorithm reads the whole of it.
    body = sse_body(data)
    limit = data.draw(st.none() | st.integers(0, 40) | st.integers(40, 200))
    assert quick_sse(cut(body, data), limit) == plain_sse(body, limit)


@settings(max_examples=examples(300))
@given(st.data())
def test_a_long_text_reads_the_same_a_window_at_a_time(data: st.DataObject) -> None:
    # A chunk longer than `_RUN_WINDOW` (a body read whole) is read a window at a
    # time; windows of any size, cutting events anywhere, read as the spec does.
    body = sse_body(data)
    limit = data.draw(st.none() | st.integers(30, 200))
    with patch.object(_sse_reader, "_RUN_WINDOW", data.draw(st.integers(1, 60))):
        assert quick_sse(cut(body, data), limit) == plain_sse(body, limit)


@settings(max_examples=examples(400))
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


@settings(max_examples=examples(300))
@given(st.data())
def test_iter_sse_fields_is_the_parser(data: st.DataObject) -> None:
    # The loop pulls the body's chunks in `iter_sse_fields`, and is fed them one at
    # a time in `SSEParser`; any body, cut anywhere, reads the same.
    chunks = cut(sse_body(data), data)
    parser = SSEParser()
    expected = [fields for chunk in chunks for fields in parser.feed_fields(chunk)]
    expected += parser.close_fields()
    assert list(iter_sse_fields(chunks)) == expected
