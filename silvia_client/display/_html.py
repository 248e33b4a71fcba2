"""The HTML views: `turn_html`, `message_html`, `session_html`, `citation_html`.

A turn is its answer with a numbered chip where each citation streamed in,
then its "Sources" (`_html_sources.py`). A session opens with a line that sums
it up (`_glance.py`). Each view says once, in a quiet line, what a reader could
otherwise miss: sources with no marker in the text (rows reloaded from history
carry no position; every row is still listed), and account links that are
relative (no `web_url`), with how to make them absolute. Each view is wrapped
in a class that tells Jupyter not to typeset `$...$` as math, with the views'
stylesheet (`_style.py`) inside it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..citations._links import resolve_citation, web_origin
from ._glance import glance_html
from ._html_sources import escape, link_html, source_item_html, sources_html
from ._protocols import CitedRow, MessageLike, SessionLike, StreamedRow, TurnLike
from ._sources import NumberedSource, chips, numbered_sources
from ._style import STYLE

__all__ = [
    "RELATIVE_NOTE",
    "citation_html",
    "message_html",
    "session_html",
    "text_html",
    "turn_html",
    "view",
]

# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"
RELATIVE_NOTE = (
    "Account links are relative to the web app (/accounts/…): pass web_url= "
    "or set SILVIA_WEB_URL to make them absolute."
)


def view(kind: str, body: str) -> str:
    """`body` in the views' wrapper: `silvia silvia-<kind>`, no math, the stylesheet."""
    return f'<div class="silvia silvia-{kind} {_NO_MATH}">{STYLE}{body}</div>'


def text_html(text: str) -> str:
    return escape(text).replace("\n", "<br>\n")


def _chip_html(source: NumberedSource) -> str:
    label = escape(source.resolved.label)
    chip = f"[{source.number}]"
    links = source.resolved.links
    if len(links) == 1:  # a chip opens its source when there is one place to open
        chip = link_html(links[0], chip)
    return f'<sup class="silvia-chip" title="{label}">{chip}</sup>'


class _Notes:
    """What a view has to say once, over all it shows: unmarked sources, relative links."""

    def __init__(self, web_url: str) -> None:
        self.web_url = web_url
        self.unmarked = 0
        self.relative = False

    def cited(self, text: str, inline: Sequence[StreamedRow], citations: Sequence[CitedRow]) -> str:
        """An answer with its chips, then its sources; what it leaves unsaid is noted."""
        sources = numbered_sources(inline, citations, web_url=self.web_url)
        pieces = chips(text, inline, sources, self.web_url)
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
        return f'<p class="silvia-answer">{answer}</p>{sources_html(sources, rows)}'

    def message(self, message: MessageLike) -> str:
        role_class = re.sub(r"[^a-z0-9-]", "", (message.role or "").lower()) or "message"
        return (
            f'<div class="silvia-message silvia-{role_class}"><p class="silvia-role">'
            f"<strong>{escape(message.role or 'message')}</strong></p>"
            f"{self.cited(message.text, message.inline_citations, message.citations)}</div>"
        )

    def html(self) -> str:
        out = ""
        if self.unmarked:
            many = self.unmarked > 1
            out += (
                f'<p class="silvia-note">{self.unmarked} cited source{"s" if many else ""} '
                f"{'have' if many else 'has'} no marker in the text: "
                f"{'their rows carry' if many else 'its rows carry'} no position (rows "
                "reloaded from history). Every source is listed under Sources.</p>"
            )
        if self.relative:
            out += f'<p class="silvia-note">{escape(RELATIVE_NOTE)}</p>'
        return out


def citation_html(
    citation: CitedRow, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its kind, its label, its links, and what it quoted."""
    resolved = resolve_citation(citation, web_url=web_origin(web_url, base_url))
    return view("citation", source_item_html(NumberedSource(1, citation, resolved)))


def turn_html(turn: TurnLike, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered citation chips, then its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = notes.cited(turn.text, turn.inline_citations, turn.citations) + notes.html()
    if not turn.complete:
        reason = f": {escape(turn.error.message)}" if turn.error is not None else ""
        body += f'<p class="silvia-note"><em>Incomplete turn{reason}.</em></p>'
    return view("turn", body)


def message_html(
    message: MessageLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with chips, its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = notes.message(message)
    return view("messages", body + notes.html())


def session_html(
    session: SessionLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title and a line that sums it up, then each message with its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = "".join(notes.message(message) for message in session.messages)
    title = escape(session.title or session.id)
    return view("session", f"<h3>{title}</h3>{glance_html(session.messages)}{notes.html()}{body}")
