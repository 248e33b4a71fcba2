"""The HTML views: `turn_html`, `message_html`, `session_html`, `citation_html`.

A turn is its answer with a numbered chip where each citation streamed in,
then the numbered sources (label, links, quote); numbering and placement are
`_sources.py`'s. Everything from the server is escaped (`_h`: markup shows as
text, bidi controls are dropped), and only the links `resolve_citation` gives
(http(s) URLs and `/accounts/` paths) become `<a href>`. Each view is wrapped
in a class that tells Jupyter not to typeset `$...$` as math.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from .._bidi import strip_bidi_controls
from ..citations._links import CitationLink, web_origin
from ._protocols import CitedRow, MessageLike, SessionLike, StreamedRow, TurnLike
from ._sources import NumberedSource, numbered_sources, resolve, short_quote, write_answer

__all__ = ["citation_html", "message_html", "session_html", "turn_html"]

# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"


def _h(text: str) -> str:
    return html.escape(strip_bidi_controls(text), quote=True)


def _text_html(text: str) -> str:
    return _h(text).replace("\n", "<br>\n")


def _link_html(link: CitationLink, text: str) -> str:
    return f'<a href="{_h(link.href)}" target="_blank" rel="noopener noreferrer">{text}</a>'


def _chip_html(source: NumberedSource) -> str:
    label = _h(source.resolved.label)
    chip = f"[{source.number}]"
    links = source.resolved.links
    if len(links) == 1:  # a chip opens its source when there is one place to open
        chip = _link_html(links[0], chip)
    return f'<sup class="silvia-chip" title="{label}">{chip}</sup>'


def _source_item_html(source: NumberedSource) -> str:
    resolved = source.resolved
    parts = [f'<span class="silvia-label">{_h(resolved.label)}</span>']
    if resolved.links:
        links = ", ".join(_link_html(link, _h(link.label)) for link in resolved.links)
        parts.append(f' — <span class="silvia-links">{links}</span>')
    quote = short_quote(source.citation.cited_text)
    if quote:
        parts.append(f'<br><q class="silvia-quote">{_h(quote)}</q>')
    return "".join(parts)


def _sources_html(sources: Sequence[NumberedSource]) -> str:
    if not sources:
        return ""
    items = "".join(
        f'<li value="{source.number}">{_source_item_html(source)}</li>' for source in sources
    )
    return f'<ol class="silvia-sources">{items}</ol>'


def _answer_html(
    text: str,
    inline: Sequence[StreamedRow],
    sources: Sequence[NumberedSource],
    web_url: str,
) -> str:
    return write_answer(
        text, inline, sources, web_url, write_text=_text_html, write_chip=_chip_html
    )


def citation_html(
    citation: CitedRow, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its label, its links, and what it quoted."""
    web_url = web_origin(web_url, base_url)
    source = NumberedSource(1, citation, resolve(citation, web_url))
    return f'<div class="silvia-citation {_NO_MATH}">{_source_item_html(source)}</div>'


def _incomplete_html(turn: TurnLike) -> str:
    if turn.complete:
        return ""
    reason = f": {_h(turn.error.message)}" if turn.error is not None else ""
    return f'<p class="silvia-note"><em>Incomplete turn{reason}.</em></p>'


def turn_html(turn: TurnLike, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered citation chips, then the numbered sources."""
    web_url = web_origin(web_url, base_url)
    sources = numbered_sources(turn.inline_citations, turn.citations, web_url=web_url)
    return (
        f'<div class="silvia-turn {_NO_MATH}">'
        f'<p class="silvia-answer">'
        f"{_answer_html(turn.text, turn.inline_citations, sources, web_url)}</p>"
        f"{_sources_html(sources)}{_incomplete_html(turn)}</div>"
    )


def _role_class(role: str | None) -> str:
    return "silvia-" + (re.sub(r"[^a-z0-9-]", "", (role or "").lower()) or "message")


def _message_body_html(message: MessageLike, web_url: str) -> str:
    sources = numbered_sources(message.inline_citations, message.citations, web_url=web_url)
    role = _h(message.role or "message")
    return (
        f'<div class="silvia-message {_role_class(message.role)}">'
        f'<p class="silvia-role"><strong>{role}</strong></p>'
        f'<p class="silvia-answer">'
        f"{_answer_html(message.text, message.inline_citations, sources, web_url)}</p>"
        f"{_sources_html(sources)}</div>"
    )


def message_html(
    message: MessageLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with chips, its numbered sources."""
    body = _message_body_html(message, web_origin(web_url, base_url))
    return f'<div class="silvia-messages {_NO_MATH}">{body}</div>'


def session_html(
    session: SessionLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title, then each message with its citations."""
    web_url = web_origin(web_url, base_url)
    title = _h(session.title or session.id)
    body = "".join(_message_body_html(message, web_url) for message in session.messages)
    return f'<div class="silvia-session {_NO_MATH}"><h3>{title}</h3>{body}</div>'
