"""An HTML view's "Sources": each source's badge, label, links that say what they open, quotes.

A quote of key/value pairs (a tool's SQL rows, a market-data JSON object) is a
small list; a long quote, and the other quotes of a pooled source's rows, fold.
`escape` shows markup as text, without bidi controls.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .._text import strip_bidi_controls
from ..citations._links import CitationLink
from ._sources import NumberedSource, fold
from ._style import KIND_NAMES, LEGACY_NAME, kind_class, link_texts

if TYPE_CHECKING:
    from ..citations._rows import Citation

FOLDED_ROWS = 3  # a quote of more key/value rows than this folds after them

# A pair starts a line or follows ", ": a key of letters, digits, `_` and inner spaces.
_KEY = r"[A-Za-z_][A-Za-z0-9_ ]{0,39}"
_PAIR = re.compile(rf"(?:^|, )({_KEY}): ")
_JSON_WORDS = {None: "null", True: "true", False: "false"}


def escape(text: str) -> str:
    return html.escape(strip_bidi_controls(text), quote=True)


def link_html(link: CitationLink, text: str, title: str | None = None) -> str:
    titled = f' title="{escape(title)}"' if title else ""
    return (
        f'<a href="{escape(link.href)}"{titled} target="_blank" '
        f'rel="noopener noreferrer">{text}</a>'
    )


def _json_pairs(text: str) -> list[list[tuple[str, str]]] | None:
    """A JSON object (or a list of them) of plain values, keyed as SQL rows are; else None.

    Numbers stay as sent (`227.48`, never `227.48000000000002`); a nested value, or a
    key no SQL row could have, leaves the quote as it is."""
    try:
        value = json.loads(text, parse_int=str, parse_float=str, parse_constant=str)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    rows: list[list[tuple[str, str]]] = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict) or not item:
            return None
        pairs: list[tuple[str, str]] = []
        for key, shown in item.items():
            if isinstance(shown, (dict, list)) or not re.fullmatch(_KEY, key):
                return None
            pairs.append((key, shown if isinstance(shown, str) else _JSON_WORDS[shown]))
        rows.append(pairs)
    return rows or None


def key_values(text: str | None) -> list[list[tuple[str, str]]] | None:
    """`text` as rows of (key, value) pairs when it is pairs; else None.

    A tool's SQL rows reach `cited_text` as `key: value, key: value` lines, each of
    two or more pairs; prose, even "Note: a colon", is not pairs. A market-data quote
    is a JSON object: it is one row of its members."""
    stripped = (text or "").strip()
    if stripped.startswith(("{", "[")):
        return _json_pairs(stripped)
    rows: list[list[tuple[str, str]]] = []
    for line in stripped.splitlines():
        line = line.strip()
        if not line:
            continue
        starts = list(_PAIR.finditer(line))
        if len(starts) < 2 or starts[0].start() != 0:
            return None
        ends = [after.start() for after in starts[1:]] + [len(line)]
        rows.append(
            [
                (here.group(1), line[here.end() : end])
                for here, end in zip(starts, ends, strict=True)
            ]
        )
    return rows or None


def _kv_html(rows: list[list[tuple[str, str]]]) -> str:
    def table(pairs: list[tuple[str, str]]) -> str:
        cells = "".join(
            f"<dt>{escape(key)}</dt><dd>{escape(fold(value)[0])}</dd>" for key, value in pairs
        )
        return f'<dl class="silvia-kv">{cells}</dl>'

    shown = "".join(table(pairs) for pairs in rows[:FOLDED_ROWS])
    rest = rows[FOLDED_ROWS:]
    if rest:
        more = "".join(table(pairs) for pairs in rest)
        plural = "s" if len(rest) > 1 else ""
        shown += (
            f'<details class="silvia-more"><summary>{len(rest)} more row{plural}</summary>'
            f"{more}</details>"
        )
    return shown


def quote_html(text: str | None) -> str:
    """What a row quoted: pairs as a key/value list, else the quote, long ones folded."""
    if not text or not text.strip():
        return ""
    rows = key_values(text)
    if rows is not None:
        return _kv_html(rows)
    short, cut = fold(text)
    out = f'<q class="silvia-quote">{escape(short)}</q>'
    if cut:
        whole = escape(text.strip()).replace("\n", "<br>\n")
        out += (
            '<details class="silvia-more"><summary>Whole quote</summary>'
            f'<div class="silvia-quote">{whole}</div></details>'
        )
    return out


def source_item_html(source: NumberedSource, rows: Iterable[Citation] = ()) -> str:
    """One source's item: badge, label, links, its quote, and its other rows' quotes folded."""
    row, links = source.citation, source.resolved.links
    kind = None if row.target is None else row.target.kind
    name = KIND_NAMES.get(kind or "", LEGACY_NAME)
    out = (
        f'<span class="silvia-badge {kind_class(kind)}">{name}</span> '
        f'<span class="silvia-label">{escape(source.resolved.label)}</span>'
    )
    if links:
        written = ", ".join(
            link_html(link, text, link.label)
            for link, text in zip(links, link_texts(kind, len(links)), strict=True)
        )
        out += f' — <span class="silvia-links">{written}</span>'
    out += quote_html(row.cited_text)
    quoted = dict.fromkeys(other.cited_text for other in rows)  # each once, in order
    others = [text for text in quoted if text and text.strip() and text != row.cited_text]
    if others:
        plural = "s" if len(others) > 1 else ""
        quotes = "".join(f"<div>{quote_html(text)}</div>" for text in others)
        out += (
            f'<details class="silvia-more"><summary>{len(others)} more quote{plural} '
            f"of this source</summary>{quotes}</details>"
        )
    return out


def sources_html(
    sources: Sequence[NumberedSource], rows: Sequence[Citation], *, folded: bool = False
) -> str:
    """The "Sources" heading and list (nothing when there are none); `rows`: every row cited.

    `folded` (a session's messages): an `<h4>`, and the list closed under one line
    that names the sources; else an `<h3>` and the list open."""
    if not sources:
        return ""
    by_source: dict[str, list[Citation]] = {}  # one pass: each source then reads its own rows
    for row in rows:
        by_source.setdefault(row.source, []).append(row)
    items = "".join(
        f'<li value="{source.number}">'
        f"{source_item_html(source, by_source.get(source.source, ()))}</li>"
        for source in sources
    )
    listed = f'<ol class="silvia-sources">{items}</ol>'
    if not folded:
        return f'<h3 class="silvia-heading">Sources</h3>{listed}'
    count = f"{len(sources)} source{'s' if len(sources) > 1 else ''}"
    names = " · ".join(escape(source.resolved.label) for source in sources)
    return (
        '<h4 class="silvia-heading">Sources</h4><details class="silvia-more silvia-fold">'
        f"<summary>{count}: {names}</summary>{listed}</details>"
    )
