"""The HTML views, and `page`: a view in a document to share, whose Content Security
Policy allows no script, request or form.

A turn is its answer with a numbered chip where each citation streamed in, then its
"Sources" (`sources_html`); a session opens with a line that sums it up (`glance_html`)
and folds each message's sources; what a reader could miss is said once (`_Notes`).
`style.css`, the views' one stylesheet, styles only `.silvia-*`, in the host's colours
where it has them, every text on its background at least 4.5:1
(`tests/display/test_themes.py`); the views are semantic HTML, readable where the
`<style>` is stripped. `page.css` styles only a `page`'s own body.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .._text import strip_bidi_controls
from ..citations._links import CitationLink, resolve_citation, web_origin
from ..citations._targets import final_targets
from ._sources import NumberedSource, chips, fold, link_texts, numbered_sources, plural

if TYPE_CHECKING:
    from ..chat._turn import Turn
    from ..citations._rows import Citation
    from ..sessions._history import Message, Session

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

# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"


def kind_class(kind: str | None) -> str:
    """The class of a kind's badge and bar segment: `silvia-kind-<kind>`, or `-none`."""
    if kind is None or kind not in KIND_NAMES:
        return "silvia-kind-none"
    return "silvia-kind-" + kind.replace("_", "-")


@functools.cache
def style(sheet: str = "style.css") -> str:
    """A `<style>` of `sheet`, read once, on one line: `style.css` is every view's, `page.css`
    a `page`'s body."""
    css = resources.files(__package__).joinpath(sheet).read_text(encoding="utf-8")
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


def key_values(text: str | None) -> list[list[tuple[str, str]]] | None:
    """`text` as rows of (key, value) pairs, else None: a tool's SQL rows (`key: value, key:
    value` lines, two pairs or more: "Note: a colon" is prose), or a market-data JSON object
    (or list of them) of plain values keyed as SQL rows are, numbers as sent (`227.48`)."""
    stripped = (text or "").strip()
    rows: list[list[tuple[str, str]]] = []
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped, parse_int=str, parse_float=str, parse_constant=str)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return None
        for item in value if isinstance(value, list) else [value]:
            # No member, a nested value, or a key no SQL row could have: the quote as it is.
            pairs = item.items() if isinstance(item, dict) else ()
            if not pairs or any(
                isinstance(v, dict | list) or not re.fullmatch(_KEY, k) for k, v in pairs
            ):
                return None
            rows.append([(k, v if isinstance(v, str) else _JSON_WORDS[v]) for k, v in pairs])
        return rows or None
    for line in stripped.splitlines():
        line = line.strip()
        if not line:
            continue
        parts = _PAIR.split(line)  # "", key, value, key, value, ... when the line is pairs
        if len(parts) < 5 or parts[0]:
            return None
        rows.append(list(zip(parts[1::2], parts[2::2], strict=True)))
    return rows or None


def _kv_table(pairs: list[tuple[str, str]]) -> str:
    cells = "".join(f"<dt>{escape(k)}</dt><dd>{escape(fold(v)[0])}</dd>" for k, v in pairs)
    return f'<dl class="silvia-kv">{cells}</dl>'


def quote_html(text: str | None) -> str:
    """What a row quoted: pairs as a key/value list, else the quote, long ones folded."""
    if not text or not text.strip():
        return ""
    rows = key_values(text)
    if rows is not None:  # the first rows shown, the rest folded
        rest = rows[FOLDED_ROWS:]
        more = _more(plural(len(rest), "more row"), "".join(map(_kv_table, rest))) if rest else ""
        return "".join(map(_kv_table, rows[:FOLDED_ROWS])) + more
    short, cut = fold(text)
    out = f'<q class="silvia-quote">{escape(short)}</q>'
    if cut:
        out += _more("Whole quote", f'<div class="silvia-quote">{text_html(text.strip())}</div>')
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
    `folded` (a session's messages): an `<h4>`, the list closed under a line naming them."""
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


def view(kind: str, body: str) -> str:
    """`body` in the views' wrapper: `silvia silvia-<kind>`, no math (`$...$`), the stylesheet."""
    return f'<div class="silvia silvia-{kind} {_NO_MATH}">{style()}{body}</div>'


def text_html(text: str) -> str:
    return escape(text).replace("\n", "<br>\n")


def _chip_html(source: NumberedSource) -> str:
    chip, links = f"[{source.number}]", source.resolved.links
    if len(links) == 1:  # a chip opens its source when there is one place to open
        chip = link_html(links[0], chip)
    return f'<sup class="silvia-chip" title="{escape(source.resolved.label)}">{chip}</sup>'


class _Notes:
    """What a view has to say once, over all it shows: unmarked sources, relative links."""

    def __init__(self, web_url: str) -> None:
        self.web_url = web_url
        self.unmarked = 0
        self.relative = False

    def cited(self, said: Turn | Message, *, folded: bool = False) -> str:
        """An answer with its chips, then its sources (`folded`: under one line), noted."""
        inline, citations = said.inline_citations, said.citations
        sources = numbered_sources(inline, citations, web_url=self.web_url)
        pieces = chips(said.text, inline, sources, self.web_url)
        self.unmarked += len(sources) - len({c.number for _, marks in pieces for c in marks})
        rows = (*citations, *inline)
        if not self.web_url and not self.relative:
            self.relative = any(
                link.href.startswith("/")
                for row in rows
                for link in resolve_citation(row, web_url=self.web_url).links
            )
        answer = "".join(
            text_html(piece) + "".join(map(_chip_html, marks)) for piece, marks in pieces
        )
        listed = sources_html(sources, rows, folded=folded)
        return f'<p class="silvia-answer">{answer}</p>{listed}'

    def message(self, message: Message, *, folded: bool = False) -> str:
        role_class = re.sub(r"[^a-z0-9-]", "", (message.role or "").lower()) or "message"
        return (
            f'<div class="silvia-message silvia-{role_class}"><p class="silvia-role">'
            f"<strong>{escape(message.role or 'message')}</strong></p>"
            f"{self.cited(message, folded=folded)}</div>"
        )

    def html(self) -> str:
        out = ""
        if self.unmarked:
            have, its = ("have", "their") if self.unmarked > 1 else ("has", "its")
            out += (
                f'<p class="silvia-note">{plural(self.unmarked, "cited source")} {have} no marker '
                f"in the text: {its} rows carry no position (rows reloaded from history). "
                "Every source is listed under Sources.</p>"
            )
        if self.relative:
            out += (
                '<p class="silvia-note">Account links are relative to the web app (/accounts/…): '
                "pass web_url= or set SILVIA_WEB_URL to make them absolute.</p>"
            )
        return out


def glance_html(messages: Sequence[Message]) -> str:
    """The line: a bar by kind, then "N messages · N sources (N rows) · Kind N ... · N legacy";
    a source counts once per message citing it, by its final target's kind."""
    kinds: Counter[str | None] = Counter()
    rows = legacy = 0
    for message in messages:
        for target in final_targets(message.inline_citations, message.citations).values():
            kinds[None if target is None else target.kind] += 1
        cited = (*message.citations, *message.inline_citations)
        rows, legacy = rows + len(cited), legacy + sum(row.target is None for row in cited)
    total = sum(kinds.values())
    typed = [(kind, kinds[kind]) for kind in KIND_NAMES if kinds[kind]]
    segments = "".join(
        f'<span class="{kind_class(kind)}" style="flex-grow:{count}"></span>'
        for kind, count in [*typed, (None, kinds[None])]  # untyped sources last, in grey
        if count
    )
    bar = f'<span class="silvia-bar" aria-hidden="true">{segments}</span>' if total else ""
    facts = [
        plural(len(messages), "message"),
        f"{plural(total, 'source')} cited ({plural(rows, 'row')})",
        *(
            f'<span class="silvia-count {kind_class(kind)}">{KIND_NAMES[kind or ""]} {count}</span>'
            for kind, count in typed
        ),
        f'<span class="silvia-count silvia-kind-none">{plural(legacy, "legacy row")}</span>',
    ]
    return f'<p class="silvia-glance">{bar}<span>{" · ".join(facts)}</span></p>'


def citation_html(
    citation: Citation, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its kind, its label, its links, and what it quoted."""
    resolved = resolve_citation(citation, web_url=web_origin(web_url, base_url))
    return view("citation", source_item_html(NumberedSource(1, citation, resolved)))


def turn_html(turn: Turn, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered citation chips, then its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = notes.cited(turn) + notes.html()
    if not turn.complete:
        reason = f": {escape(turn.error.message)}" if turn.error is not None else ""
        body += f'<p class="silvia-note"><em>Incomplete turn{reason}.</em></p>'
    return view("turn", body)


def message_html(
    message: Message, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with chips, its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    return view("messages", notes.message(message) + notes.html())


def session_html(
    session: Session, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title and a line that sums it up, then each message, its sources folded."""
    notes = _Notes(web_origin(web_url, base_url))
    body = "".join(notes.message(message, folded=True) for message in session.messages)
    title = escape(session.title or session.id)
    return view("session", f"<h3>{title}</h3>{glance_html(session.messages)}{notes.html()}{body}")


def page(
    obj: object,
    path: str | os.PathLike[str] | None = None,
    *,
    web_url: str | None = None,
    title: str | None = None,
) -> str:
    """A standalone HTML page of `obj`; with `path`, also written there (UTF-8). `web_url`
    (default `SILVIA_WEB_URL`): a page opened from a file has no web app to be relative to."""
    if hasattr(obj, "messages"):
        session = cast("Session", obj)
        shown, html = session.title or session.id, session_html(session, web_url=web_url)
    elif hasattr(obj, "complete"):
        shown, html = "Silvia answer", turn_html(cast("Turn", obj), web_url=web_url)
    elif hasattr(obj, "role"):
        shown, html = "Silvia message", message_html(cast("Message", obj), web_url=web_url)
    elif hasattr(obj, "source") and hasattr(obj, "target"):
        shown, html = "Silvia citation", citation_html(cast("Citation", obj), web_url=web_url)
    else:
        raise TypeError(
            f"page() takes a Turn, a Session, a Message or a Citation, not {type(obj).__name__}"
        )
    document = (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{escape(title or shown)}</title>{style('page.css')}</head>\n"
        f"<body>{html}</body></html>\n"
    )
    if path is not None:
        Path(path).write_text(document, encoding="utf-8")
    return document
