"""Numbering the cited sources and placing their marks in the answer: what every view, and
the `silvia` command (`cli/_render.py`), shares; `fold` and `one_line` shorten what they show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..citations._links import ResolvedCitation, resolve_citation, web_origin
from ..citations._targets import final_targets

if TYPE_CHECKING:
    from ..citations._rows import Citation, InlineCitation

FOLDED_CHARS = 200  # a quote longer than this folds after it


def number_sources(citations: Iterable[Citation]) -> dict[str, int]:
    """Each source's number, 1, 2, ..., in order of first appearance."""
    numbers: dict[str, int] = {}
    for citation in citations:
        numbers.setdefault(citation.source, len(numbers) + 1)
    return numbers


@dataclass(slots=True, eq=False, repr=False)
class NumberedSource:
    """One cited source: its number, the citation that stands for it, and how it resolves."""

    number: int
    citation: Citation
    resolved: ResolvedCitation

    @property
    def source(self) -> str:
        return self.citation.source

    def __repr__(self) -> str:
        return f"NumberedSource({self.number}, label={self.resolved.label!r})"


def numbered_sources(
    inline: Sequence[Citation],
    citations: Sequence[Citation],
    *,
    web_url: str | None = None,
    base_url: str | None = None,
) -> list[NumberedSource]:
    """Each source once, numbered as `number_sources(inline + citations)` numbers it, shown
    by its first row (of `citations`, else `inline`) carrying its final target (`target_for`).
    """
    web_url = web_origin(web_url, base_url)
    numbers = number_sources([*inline, *citations])
    finals = final_targets(inline, citations)
    chosen: dict[str, Citation] = {}
    for citation in (*citations, *inline):
        if citation.target == finals[citation.source]:
            chosen.setdefault(citation.source, citation)
    return [
        NumberedSource(number, chosen[source], resolve_citation(chosen[source], web_url=web_url))
        for source, number in numbers.items()
    ]


def marked_segments(
    text: str, inline: Sequence[InlineCitation], numbers: dict[str, int]
) -> list[tuple[str, list[int]]]:
    """`text` cut at each streamed citation's offset, with the source numbers to mark there:
    one per source at an offset, in streamed order; an offset that is None (rows reloaded
    from history) or outside the text is not placed. The pieces joined give back `text`.
    """
    return [
        (piece, [number for number, _ in marks])
        for piece, marks in marked_rows(text, inline, numbers)
    ]


def marked_rows(
    text: str, inline: Sequence[InlineCitation], numbers: dict[str, int]
) -> list[tuple[str, list[tuple[int, InlineCitation]]]]:
    """`marked_segments`, each mark with the row it stands for (its source's first there)."""
    placed = sorted(
        (c for c in inline if c.offset is not None and 0 <= c.offset <= len(text)),
        key=lambda c: c.offset or 0,
    )
    pieces: list[tuple[str, list[tuple[int, InlineCitation]]]] = []
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


def chips(
    text: str, inline: Sequence[InlineCitation], sources: Sequence[NumberedSource], web_url: str
) -> list[tuple[str, list[NumberedSource]]]:
    """The answer's pieces, each with the chips after it: its source's number, its own row's
    label and links (where a source's rows carry different targets, a chip opens its own)."""
    by_number = {source.number: source for source in sources}
    numbers = {source.source: source.number for source in sources}
    out: list[tuple[str, list[NumberedSource]]] = []
    for piece, marks in marked_rows(text, inline, numbers):
        shown: list[NumberedSource] = []
        for number, row in marks:
            listed = by_number[number]
            if row.target == listed.citation.target and row.title == listed.citation.title:
                shown.append(listed)  # resolves alike: the usual case
            else:
                shown.append(NumberedSource(number, row, resolve_citation(row, web_url=web_url)))
        out.append((piece, shown))
    return out


# What a link says it opens, by its row's target kind (None: a legacy http(s) source).
LINK_TEXT: dict[str | None, str] = {
    **dict.fromkeys(("account", "accounts"), "Open account"),
    **dict.fromkeys(("web", None), "Open page"),
    **dict.fromkeys(("tax_reference", "card_document", "mortgage_reference"), "Open document"),
}


def link_texts(kind: str | None, count: int) -> list[str]:
    """What each of a row's `count` links says: "Open account", or "Open account (1 of 2)"..."""
    opens = LINK_TEXT.get(kind, "Open")
    if count == 1:
        return [opens]
    return [f"{opens} ({number} of {count})" for number in range(1, count + 1)]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def one_line(text: str) -> str:
    return " ".join(text.split())


def fold(text: str) -> tuple[str, bool]:
    """`text` on one line, cut to `FOLDED_CHARS` (with "…"), and whether it was cut."""
    text = one_line(text)
    if len(text) <= FOLDED_CHARS:
        return text, False
    return text[: FOLDED_CHARS - 1] + "…", True
