"""Placing the marks (`marked_rows`, `marked_segments`), and the sources list, at any size.

The marks are held to their rule (`_same`), also where many citations share an offset;
each source's item is given only its own rows (issue 20, finding 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.citations import InlineCitation
from silvia_client.display import _html, marked_segments, number_sources, turn_html
from silvia_client.display._sources import marked_rows

from ..citations.strategies import PROPERTY
from ._build import build_turn, row, web
from ._dom import chips


def _rows(sources_and_offsets: Sequence[tuple[str, int | None]]) -> list[InlineCitation]:
    return [
        InlineCitation.model_validate({"source": source, "title": f"T{i}", "offset": offset})
        for i, (source, offset) in enumerate(sources_and_offsets)
    ]


def _same(
    text: str, inline: Sequence[InlineCitation], numbers: dict[str, int]
) -> list[tuple[str, list[tuple[int, InlineCitation]]]]:
    """`marked_rows`, held to the rule: the text cut at each placed offset, and there one
    mark per source, in streamed order, standing for its first row there."""
    pieces = marked_rows(text, inline, numbers)
    expected: dict[int, dict[int, InlineCitation]] = {}
    for cited in sorted(inline, key=lambda c: c.offset or 0):  # stable: streamed order kept
        if cited.offset is not None and 0 <= cited.offset <= len(text):
            expected.setdefault(cited.offset, {}).setdefault(numbers[cited.source], cited)
    assert "".join(piece for piece, _ in pieces) == text
    assert pieces[-1][1] == []
    # The rows are compared as objects: each mark stands for its source's first row there.
    placed, end = [], 0
    for piece, marks in pieces[:-1]:
        end += len(piece)
        placed.append((end, [(n, id(r)) for n, r in marks]))
    assert placed == [(at, [(n, id(r)) for n, r in rows.items()]) for at, rows in expected.items()]
    return pieces


def test_many_sources_at_one_offset_give_one_mark_and_one_chip_each_in_streamed_order() -> None:
    sources = [f"s{i}" for i in range(500)]
    # Each source three times at offset 5, interleaved; then more at the end of the text.
    inline = _rows([(source, 5) for _ in range(3) for source in sources] + [("s7", 10), ("s3", 10)])
    numbers = number_sources(inline)
    text = "Hello world"
    plain = _same(text, inline, numbers)
    assert [piece for piece, _ in plain] == ["Hello", " worl", "d"]
    assert [n for n, _ in plain[0][1]] == list(range(1, 501))
    assert [got is inline[i] for i, (_, got) in enumerate(plain[0][1])] == [True] * 500
    assert marked_segments(text, inline, numbers) == [
        ("Hello", list(range(1, 501))),
        (" worl", [8, 4]),
        ("d", []),
    ]
    # The same in a view: one chip per source at an offset, even at the start.
    urls = [f"https://e.example/{i}" for i in range(300)]
    rows = [row(url, f"T{i}", web(url)) for i, url in enumerate(urls)]
    turn = build_turn("Answer", *rows, *rows, " tail", rows[9])
    expected = [(6, f"[{i}]") for i in range(1, 301)] + [(11, "[10]")]
    assert chips(turn_html(turn)) == expected
    assert chips(turn_html(build_turn(rows[0], "Text"))) == [(0, "[1]")]


def test_each_source_item_is_given_only_its_own_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[list[Any]] = []
    item = _html.source_item_html

    def recording(source: Any, rows: Any = ()) -> str:
        given.append(list(rows))
        return item(source, rows)

    monkeypatch.setattr(_html, "source_item_html", recording)
    rows = [row(f"https://example.com/{n % 50}", cited_text=f"quote {n}") for n in range(500)]
    html = turn_html(build_turn(*rows, "x", summary=[]))
    assert len(given) == 50
    assert all(len(own) == 10 for own in given)  # ten rows a source, not all 500
    assert all({r.source for r in own} == {own[0].source} for own in given)
    assert "9 more quotes of this source" in html


@PROPERTY
@given(
    text=st.text(max_size=12),
    marks=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d"]),
            st.one_of(st.none(), st.integers(min_value=-2, max_value=14)),
        ),
        max_size=30,
    ),
)
def test_marks_are_placed_as_the_plain_rule_places_them(
    text: str, marks: list[tuple[str, int | None]]
) -> None:
    inline = _rows(marks)
    numbers = number_sources(inline)
    _same(text, inline, numbers)
