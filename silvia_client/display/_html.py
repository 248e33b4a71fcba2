"""The HTML views: `turn_html`, `message_html`, `session_html`, `citation_html`.

A turn is its answer with a numbered chip where each citation streamed in,
then its "Sources" (`_html_sources.py`); numbering and placement are
`_sources.py`'s. A session opens with a line that sums it up (`_glance.py`).
Each view says once, in a quiet line, what a reader could otherwise miss:
sources with no marker in the text (rows reloaded from history carry no
position; every row is still listed), and account links that are relative
(no `web_url`), with how to make them absolute. Everything from the server is
escaped, and each view is wrapped in a class that tells Jupyter not to typeset
`$...$` as math, with the views' stylesheet (`_style.py`) inside it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..citations._links import web_origin
from ._glance import glance_html
from ._html_sources import escape, link_html, source_item_html, sources_html
from ._protocols import CitedRow, MessageLike, SessionLike, StreamedRow, TurnLike
from ._sources import (
    NumberedSource,
    marked_segments,
    numbered_sources,
    resolve,
    write_answer,
)
from ._style import STYLE

__all__ = ["RELATIVE_NOTE", "citation_html", "message_html", "session_html", "turn_html"]

# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"
RELATIVE_NOTE = (
    "Account links are relative to the web app (/accounts/…): pass web_url= "
    "or set SILVIA_WEB_URL to make them absolute."
)


def _view(kind: str, body: str) -> str:
    return f'<div class="silvia silvia-{kind} {_NO_MATH}">{STYLE}{body}</div>'


def _text_html(text: str) -> str:
    return escape(text).replace("\n", "<br>\n")


def _chip_html(source: NumberedSource) -> str:
    label = escape(source.resolved.label)
    chip = f"[{source.number}]"
    links = source.resolved.links
    if len(links) == 1:  # a chip opens its source when there is one place to open
        chip = link_html(links[0], chip)
    return f'<sup class="silvia-chip" title="{label}">{chip}</sup>'


def _answer_html(
    text: str, inline: Sequence[StreamedRow], sources: Sequence[NumberedSource], web_url: str
) -> str:
    answer = write_answer(
        text, inline, sources, web_url, write_text=_text_html, write_chip=_chip_html
    )
    return f'<p class="silvia-answer">{answer}</p>'


class _Notes:
    """What a view has to say once: unmarked sources, relative account links."""

    def __init__(self, web_url: str) -> None:
        self.web_url = web_url
        self.unmarked = 0
        self.relative = False

    def see(self, text: str, inline: Sequence[StreamedRow], citations: Sequence[CitedRow],
            sources: Sequence[NumberedSource]) -> None:  # fmt: skip
        numbers = {source.source: source.number for source in sources}
        marked = {n for _, marks in marked_segments(text, inline, numbers) for n in marks}
        self.unmarked += len(set(numbers.values()) - marked)
        if not self.web_url and not self.relative:
            self.relative = any(
                link.href.startswith("/")
                for row in (*citations, *inline)
                for link in resolve(row, self.web_url).links
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


def _cited(
    text: str,
    inline: Sequence[StreamedRow],
    citations: Sequence[CitedRow],
    notes: _Notes,
) -> str:
    """An answer with its chips, then its sources; what it leaves unsaid goes to `notes`."""
    sources = numbered_sources(inline, citations, web_url=notes.web_url)
    notes.see(text, inline, citations, sources)
    return _answer_html(text, inline, sources, notes.web_url) + sources_html(
        sources, (*citations, *inline)
    )


def citation_html(
    citation: CitedRow, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its kind, its label, its links, and what it quoted."""
    web_url = web_origin(web_url, base_url)
    source = NumberedSource(1, citation, resolve(citation, web_url))
    return _view("citation", source_item_html(source))


def _incomplete_html(turn: TurnLike) -> str:
    if turn.complete:
        return ""
    reason = f": {escape(turn.error.message)}" if turn.error is not None else ""
    return f'<p class="silvia-note"><em>Incomplete turn{reason}.</em></p>'


def turn_html(turn: TurnLike, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered citation chips, then its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = _cited(turn.text, turn.inline_citations, turn.citations, notes)
    return _view("turn", body + notes.html() + _incomplete_html(turn))


def _role_class(role: str | None) -> str:
    return "silvia-" + (re.sub(r"[^a-z0-9-]", "", (role or "").lower()) or "message")


def _message_body_html(message: MessageLike, notes: _Notes) -> str:
    role = escape(message.role or "message")
    cited = _cited(message.text, message.inline_citations, message.citations, notes)
    return (
        f'<div class="silvia-message {_role_class(message.role)}">'
        f'<p class="silvia-role"><strong>{role}</strong></p>{cited}</div>'
    )


def message_html(
    message: MessageLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with chips, its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    body = _message_body_html(message, notes)
    return _view("messages", body + notes.html())


def session_html(
    session: SessionLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title and a line that sums it up, then each message with its sources."""
    notes = _Notes(web_origin(web_url, base_url))
    title = escape(session.title or session.id)
    body = "".join(_message_body_html(message, notes) for message in session.messages)
    top = f"<h3>{title}</h3>{glance_html(session.messages)}{notes.html()}"
    return _view("session", top + body)
