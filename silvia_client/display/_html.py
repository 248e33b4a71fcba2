"""The HTML views, and `page`.

A turn is its answer with a numbered chip where each citation streamed in, then its
sources. A session opens with a line that sums it up, drawn in CSS (a bar by kind)
with the same facts as text, and folds each message's sources. A view
says once what a reader could miss: sources with no marker (rows reloaded from
history carry no position) and relative account links. Each view tells Jupyter not
to typeset `$...$` and carries the stylesheet. `page(obj)` is a view in a document
to share, whose Content Security Policy allows no script, request or form.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..citations._final import final_targets
from ..citations._links import resolve_citation, web_origin
from ._html_sources import (
    KIND_NAMES,
    escape,
    kind_class,
    link_html,
    source_item_html,
    sources_html,
    style,
)
from ._sources import NumberedSource, chips, numbered_sources, plural

if TYPE_CHECKING:
    from ..chat._turn import Turn
    from ..citations._rows import Citation
    from ..sessions._history import Message, Session

# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
_PAGE_STYLE = (
    "<style>:root{color-scheme:light dark}"
    "body{margin:0 auto;padding:1rem;max-width:64rem;background:Canvas;color:CanvasText}"
    "</style>"
)


def view(kind: str, body: str) -> str:
    """`body` in the views' wrapper: `silvia silvia-<kind>`, no math, the stylesheet."""
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
        """An answer with its chips, then its sources (`folded`: under one line); what it
        leaves unsaid is noted."""
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
    """The line: a bar by kind, then "N messages · N sources (N rows) · Kind N ... · N legacy".

    A source counts once per message that cites it, by the kind of its final target;
    a legacy row has no target.
    """
    kinds: Counter[str | None] = Counter()
    rows = legacy = 0
    for message in messages:
        for target in final_targets(message.inline_citations, message.citations).values():
            kinds[None if target is None else target.kind] += 1
        for row in (*message.citations, *message.inline_citations):
            rows += 1
            legacy += row.target is None
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
    body = notes.message(message)
    return view("messages", body + notes.html())


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
    """A standalone HTML page of `obj`; with `path`, also written there (UTF-8).

    `web_url` (default `SILVIA_WEB_URL`) makes account links absolute, as the
    views take it: a page opened from a file has no web app to be relative to.
    """
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
        f"<title>{escape(title or shown)}</title>{_PAGE_STYLE}</head>\n"
        f"<body>{html}</body></html>\n"
    )
    if path is not None:
        Path(path).write_text(document, encoding="utf-8")
    return document
