"""The reader's lists of events: canonical runs a window at a time, and the quick pattern.

`iter_sse_batches` hands over the events a chunk ends in lists; a run of canonical
events (`_sse_runs.py`) is read by regular expressions, a window of the text at a
time, so that each list stays bounded however long the chunk. The quick pattern
gives each event as a 3-tuple, or what a caller's shortcut read of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client._sse import (
    SSEParser,
    aiter_sse_fields,
    iter_sse_batches,
    iter_sse_fields,
    quick_pattern,
)
from silvia_client._sse_reader import _RUN_WINDOW

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

NAMES = st.sampled_from(["text", "citation", "done", "x"])
DATA = st.text(st.characters(blacklist_characters="\r\n"), max_size=20)


def canonical(name: str, data: str) -> str:
    return f"event: {name}\ndata: {data}\n\n"


def long_run(count: int = 3 * _RUN_WINDOW // 40) -> tuple[bytes, list[tuple[str, str]]]:
    """A body of one canonical run some windows long, and its events as (name, data)."""
    events = [("text", f'{{"text": "{index:08d}"}}') for index in range(count)]
    return "".join(canonical(*event) for event in events).encode(), events


def text_of(batch: list[tuple[str, str, str, int | None]]) -> int:
    """How much text a list's events were read from."""
    return sum(len(canonical(name, data)) for name, data, _, _ in batch)


# --------------------------------------------------------------------- a run, a window at a time


def test_a_long_run_is_handed_over_a_window_at_a_time() -> None:
    body, events = long_run()
    batches = list(iter_sse_batches([body], None))
    assert len(batches) > 1
    assert all(text_of(batch) <= _RUN_WINDOW for batch in batches)
    assert [fields for batch in batches for fields in batch] == [
        (name, data, "", None) for name, data in events
    ]
    quick = list(iter_sse_batches([body], quick_pattern()))
    assert [len(batch) for batch in quick] == [len(batch) for batch in batches]
    assert [fields for batch in quick for fields in batch] == [
        ("", name, data) for name, data in events
    ]


def test_a_parser_fed_a_long_run_returns_every_window_of_it() -> None:
    body, events = long_run()
    parser = SSEParser()
    assert [(f[0], f[1]) for f in parser.feed_fields(body)] == events
    assert [(e.event, e.data) for e in parser.feed(body + body)] == events + events


# ------------------------------------------------------------------------------ the quick pattern


@given(st.lists(st.tuples(NAMES, DATA), max_size=8))
def test_the_quick_pattern_reads_each_event_of_a_run(events: list[tuple[str, str]]) -> None:
    text = "".join(canonical(name, data) for name, data in events)
    assert quick_pattern().findall(text) == [("", name, data) for name, data in events]
    shortcut = quick_pattern(r"event: text\ndata: ([^\n]*)\n\n")
    assert shortcut.findall(text) == [
        (data, "", "") if name == "text" else ("", name, data) for name, data in events
    ]


@pytest.mark.parametrize("shortcut", ["event: text\ndata: [^\n]*\n\n", "(a)(b)", "((a))"])
def test_a_shortcut_has_exactly_one_group(shortcut: str) -> None:
    with pytest.raises(ValueError, match=r"^a shortcut has exactly one group$"):
        quick_pattern(shortcut)


def test_events_off_a_run_come_in_the_quick_shape_too() -> None:
    # Not canonical (no `event` line, `data:` without its space, an id): the line loop.
    body = b"data: a\n\nid: 7\ndata:b\n\nevent: text\ndata: c\n\n"
    assert [tuple(e) for e in iter_sse_batches([body], quick_pattern("event: (x)\n\n"))] == [
        (("", "message", "a"), ("", "message", "b"), ("", "text", "c"))
    ]
    assert [(e[0], e[1]) for e in iter_sse_fields([body])] == [
        ("message", "a"),
        ("message", "b"),
        ("text", "c"),
    ]


# ------------------------------------------------------------------ an async source, as it comes


class Chunks:
    """An async iterator of chunks with no `aclose` (not a generator)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = iter(chunks)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return next(self.chunks)
        except StopIteration:
            raise StopAsyncIteration from None


@pytest.mark.anyio
async def test_an_async_source_without_aclose() -> None:
    events = [(f[0], f[1]) async for f in aiter_sse_fields(Chunks([b"data: a\n", b"\n"]))]
    assert events == [("message", "a")]
    early = aiter_sse_fields(Chunks([b"data: a\n\n", b"data: b\n\n"]))
    assert (await early.__anext__())[1] == "a"
    await early.aclose()  # closes its source only if the source can be closed


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
