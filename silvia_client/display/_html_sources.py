"""An HTML view's "Sources": each source's badge, label, links that say what they open, quotes.

A quote of key/value pairs (a tool's SQL rows, a market-data JSON object) is a
small list; a long quote, and the other quotes of a pooled source's rows, fold.
`escape` shows markup as text, without bidi controls. `style.css`, the views' one
stylesheet, styles only `.silvia-*`, in the host's colours where it has them, every
text on its background at least 4.5:1 (`tests/display/test_themes.py`); the views
are semantic HTML, readable where the `<style>` is stripped.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import TYPE_CHECKING

from .._text import strip_bidi_controls
from ..citations._links import CitationLink
from ._sources import NumberedSource, fold, link_texts, plural

if TYPE_CHECKING:
    from ..citations._rows import Citation

FOLDED_ROWS = 3  # a quote of more key/value rows than this folds after them

# A pair starts a line or follows ", ": a key of letters, digits, `_` and inner spaces.
_KEY = r"[A-Za-z_][A-Za-z0-9_ ]{0,39}"
_PAIR = re.compile(rf"(?:^|, )({_KEY}): ")
_JSON_WORDS = {None: "null", True: "true", False: "false"}

# What the badge of each kind says; a row with no target says LEGACY_NAME.
KIND_NAMES = {
    "web": "Web page",
    "tax_reference": "Tax document",
    "card_document": "Card document",
    "mortgage_reference": "Mortgage document",
    "market_data": "Market data",
    "analysis": "Analysis",
    "account": "Account",
    "accounts": "Accounts",
    "portfolio": "Portfolio",
}
LEGACY_NAME = "Untyped"


def kind_class(kind: str | None) -> str:
    """The class of a kind's badge and bar segment: `silvia-kind-<kind>`, or `-none`."""
    if kind is None or kind not in KIND_NAMES:
        return "silvia-kind-none"
    return "silvia-kind-" + kind.replace("_", "-")


@functools.cache
def style() -> str:
    """The `<style>` of every view: `style.css`, read once, on one line as views always had it."""
    css = resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")
    return "<style>" + css.replace("\n", "") + "</style>"


def _more(summary: str, body: str, classes: str = "") -> str:
    return f'<details class="silvia-more{classes}"><summary>{summary}</summary>{body}</details>'


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
        parts = _PAIR.split(line)  # "", key, value, key, value, ... when the line is pairs
        if len(parts) < 5 or parts[0]:
            return None
        rows.append(list(zip(parts[1::2], parts[2::2], strict=True)))
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
        shown += _more(plural(len(rest), "more row"), "".join(table(pairs) for pairs in rest))
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
        out += _more("Whole quote", f'<div class="silvia-quote">{whole}</div>')
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
        quotes = "".join(f"<div>{quote_html(text)}</div>" for text in others)
        out += _more(f"{plural(len(others), 'more quote')} of this source", quotes)
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
    names = " · ".join(escape(source.resolved.label) for source in sources)
    summary = f"{plural(len(sources), 'source')}: {names}"
    return '<h4 class="silvia-heading">Sources</h4>' + _more(summary, listed, " silvia-fold")
