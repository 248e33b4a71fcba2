"""Numbering the cited sources, and placing their marks in the answer: what every view shares.

Sources are numbered in the order the answer first cites them (sources only
the summary names come after); each is shown through the row that carries its
final target (`target_for`'s rule). `marked_segments` cuts the answer at each
streamed citation's offset; `write_answer` writes it, pieces and chips, in a
view's own escaping. The HTML views (`_html.py`), the Markdown views
(`_markdown.py`) and the `silvia` command (`cli/_render.py`) all number and
place through here; `short_quote` and `one_line` shorten what they show.
Rows are read through `_protocols.py` (`CitedRow`, `StreamedRow`): no model is
imported here, and the ground floor's `resolve_citation` and `final_targets`
are called through `resolve` and `_final_targets`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..citations._final import final_targets
from ..citations._links import ResolvedCitation, resolve_citation, web_origin
from ._protocols import CitedRow, StreamedRow

__all__ = [
    "NumberedSource",
    "chip_source",
    "marked_rows",
    "marked_segments",
    "number_sources",
    "numbered_sources",
    "one_line",
    "resolve",
    "short_quote",
    "write_answer",
]

_QUOTE_CHARS = 200


def resolve(row: CitedRow, web_url: str) -> ResolvedCitation:
    """`resolve_citation(row, web_url=web_url)`, for any row (`web_url` is an origin already)."""
    return resolve_citation(row, web_url=web_url)


def number_sources(citations: Iterable[CitedRow]) -> dict[str, int]:
    """Each source's number, 1, 2, ..., in order of first appearance."""
    numbers: dict[str, int] = {}
    for citation in citations:
        numbers.setdefault(citation.source, len(numbers) + 1)
    return numbers


class NumberedSource:
    """One cited source: its number, the citation that stands for it, and how it resolves."""

    __slots__ = ("citation", "number", "resolved")

    def __init__(self, number: int, citation: CitedRow, resolved: ResolvedCitation) -> None:
        self.number: int = number
        self.citation: CitedRow = citation
        self.resolved: ResolvedCitation = resolved

    @property
    def source(self) -> str:
        return self.citation.source

    def __repr__(self) -> str:
        return f"NumberedSource({self.number}, label={self.resolved.label!r})"


def numbered_sources(
    inline: Sequence[CitedRow],
    citations: Sequence[CitedRow],
    *,
    web_url: str | None = None,
    base_url: str | None = None,
) -> list[NumberedSource]:
    """Each source once, numbered as `number_sources(inline + citations)` numbers it.

    A source is represented by a row carrying its final target (the summary's,
    else its last streamed one, as `Turn.target_for` has it): the first such row
    of `citations`, else of `inline`. `web_url` makes account links absolute.
    """
    web_url = web_origin(web_url, base_url)
    numbers = number_sources([*inline, *citations])
    finals = final_targets(inline, citations)
    chosen: dict[str, CitedRow] = {}
    for citation in (*citations, *inline):
        if citation.target == finals[citation.source]:
            chosen.setdefault(citation.source, citation)
    return [
        NumberedSource(number, chosen[source], resolve(chosen[source], web_url))
        for source, number in numbers.items()
    ]


def marked_segments(
    text: str, inline: Sequence[StreamedRow], numbers: dict[str, int]
) -> list[tuple[str, list[int]]]:
    """`text` cut at each streamed citation's offset, with the source numbers to mark there.

    Citations without an offset (rows reloaded from history) or with one outside
    the text are not placed. Several citations at one offset give one mark per
    source, in the order they streamed. The pieces joined give back `text`.
    """
    return [
        (piece, [number for number, _ in marks])
        for piece, marks in marked_rows(text, inline, numbers)
    ]


def marked_rows(
    text: str, inline: Sequence[StreamedRow], numbers: dict[str, int]
) -> list[tuple[str, list[tuple[int, StreamedRow]]]]:
    """`marked_segments`, each mark with the row it stands for (its source's first there)."""
    placed = sorted(
        (c for c in inline if c.offset is not None and 0 <= c.offset <= len(text)),
        key=lambda c: c.offset or 0,
    )
    pieces: list[tuple[str, list[tuple[int, StreamedRow]]]] = []
    start = 0
    marked: set[int] = set()  # the numbers marked at `start`: one look-up per citation
    for citation in placed:
        offset = citation.offset or 0
        number = numbers[citation.source]
        if pieces and offset == start:
            if number not in marked:
                marked.add(number)
                pieces[-1][1].append((number, citation))
            continue
        pieces.append((text[start:offset], [(number, citation)]))
        marked = {number}
        start = offset
    pieces.append((text[start:], []))
    return pieces


def chip_source(
    number: int, row: StreamedRow, listed: NumberedSource, web_url: str
) -> NumberedSource:
    """What a chip shows: its source's number, and its own row's label and links."""
    shown = listed.citation
    if row.target == shown.target and row.title == shown.title:
        return listed  # resolves alike: the usual case, where a source keeps one target
    return NumberedSource(number, row, resolve(row, web_url))


def write_answer(
    text: str,
    inline: Sequence[StreamedRow],
    sources: Sequence[NumberedSource],
    web_url: str,
    *,
    write_text: Callable[[str], str],
    write_chip: Callable[[NumberedSource], str],
) -> str:
    """The answer with its chips, as a view writes it: each piece of text through
    `write_text`, each mark through `write_chip` (its source's number, its own row's
    label and links: `chip_source`)."""
    by_number = {source.number: source for source in sources}
    numbers = {source.source: source.number for source in sources}
    out = []
    for piece, marks in marked_rows(text, inline, numbers):
        out.append(write_text(piece))
        out.extend(
            write_chip(chip_source(number, row, by_number[number], web_url))
            for number, row in marks
        )
    return "".join(out)


def short_quote(text: str | None) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"


def one_line(text: str) -> str:
    return " ".join(text.split())
