"""The Markdown views (CommonMark, python-markdown, Jupyter): the HTML views' layout. `_m`
escapes server text; `_md_link` percent-encodes what could end or bend a destination.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._text import strip_bidi_controls
from ..citations._links import CitationLink, resolve_citation, web_origin
from ._sources import NumberedSource, chips, fold, link_texts, numbered_sources, one_line

if TYPE_CHECKING:
    from ..chat._turn import Turn
    from ..citations._rows import Citation
    from ..sessions._history import Message, Session

# Every character Markdown (CommonMark, GFM, and Jupyter's `$` math) may read as syntax,
# but `&`, `<` and `>`, which become entities (a backslash before one would show).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~=$])")
_LINE_START = re.compile(r"[ \t]*\n[ \t]*")
# What could end or bend a link destination (only http(s) URLs and /accounts/ paths, no
# spaces): a backslash, `()<>`, quotes (python-markdown starts a title at one), a backtick
# (a code span across two links beats the link). `&` is `&amp;`, which every reader reads
# back as `&`, so `&lt;` in a URL stays four characters and a query keeps its `&`.
_MD_HREF = {ord("&"): "&amp;"} | {ord(c): f"%{ord(c):02X}" for c in "\\() <>'\"`"}


def _m(text: str) -> str:
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", strip_bidi_controls(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_link(link: CitationLink, text: str) -> str:
    return f"[{text}]({link.href.translate(_MD_HREF)})"


def _chip_markdown(source: NumberedSource) -> str:
    chip, links = f"\\[{source.number}\\]", source.resolved.links
    if len(links) == 1:  # a chip opens its source when there is one place to open
        chip = _md_link(links[0], chip)
    return f"<sup>{chip}</sup>"


def _source_markdown(source: NumberedSource) -> str:
    resolved = source.resolved
    line = f"**{_m(one_line(resolved.label))}**"
    if resolved.links:
        target = source.citation.target
        texts = link_texts(None if target is None else target.kind, len(resolved.links))
        line += " — " + ", ".join(
            _md_link(link, _m(text)) for link, text in zip(resolved.links, texts, strict=True)
        )
    quote = fold(source.citation.cited_text or "")[0]
    if quote:
        line += f"  \n   > {_m(quote)}"
    return line


def _cited_markdown(answer: Turn | Message, web_url: str, heading: str) -> list[str]:
    """The answer with its markers (each line break a hard break: leading spaces would
    start a code block), then its numbered sources under `heading`."""
    inline = answer.inline_citations
    sources = numbered_sources(inline, answer.citations, web_url=web_url)
    marked = "".join(
        _LINE_START.sub("  \n", _m(piece)) + "".join(map(_chip_markdown, marks))
        for piece, marks in chips(answer.text, inline, sources, web_url)
    )
    parts = [marked.lstrip(" \t")]
    if sources:
        listed = "\n".join(f"{source.number}. {_source_markdown(source)}" for source in sources)
        parts.append(heading + listed)
    return parts


def citation_markdown(
    citation: Citation, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its label in bold, its links, and what it quoted."""
    resolved = resolve_citation(citation, web_url=web_origin(web_url, base_url))
    return _source_markdown(NumberedSource(1, citation, resolved))


def turn_markdown(turn: Turn, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered markers, then the numbered sources."""
    web_url = web_origin(web_url, base_url)
    parts = _cited_markdown(turn, web_url, "**Sources**\n\n")
    if not turn.complete:
        reason = f": {_m(one_line(turn.error.message))}" if turn.error is not None else ""
        parts.append(f"*Incomplete turn{reason}\\.*")
    return "\n\n".join(parts)


def message_markdown(
    message: Message, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with markers, its numbered sources."""
    role = f"**{_m(one_line(message.role or 'message'))}**"
    return "\n\n".join([role, *_cited_markdown(message, web_origin(web_url, base_url), "")])


def session_markdown(
    session: Session, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title, then each message with its citations."""
    web_url = web_origin(web_url, base_url)
    title = f"### {_m(one_line(session.title or session.id))}"
    return "\n\n".join([title, *(message_markdown(m, web_url=web_url) for m in session.messages)])
