"""The Markdown views: `turn_markdown`, `message_markdown`, `session_markdown`, `citation_markdown`.

The same layout as the HTML views (`_html.py`), for CommonMark readers,
python-markdown and Jupyter: numbering and placement are `_sources.py`'s.
Text from the server is escaped (`_m`: every character Markdown may read as
syntax, HTML neutralised, bidi controls dropped), and a link destination is
percent-encoded where a reader could end or bend it (`_md_href`), so every
reader reads the whole URL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._clean import strip_bidi_controls
from ..citations._links import CitationLink, web_origin
from ._protocols import CitedRow, MessageLike, SessionLike, StreamedRow, TurnLike
from ._sources import NumberedSource, numbered_sources, one_line, resolve, short_quote, write_answer
from ._style import link_texts

__all__ = ["citation_markdown", "message_markdown", "session_markdown", "turn_markdown"]

# Every character Markdown (CommonMark, GFM, and Jupyter's `$` math) may read as syntax,
# but `&`, `<` and `>`, which become entities (a backslash before one would show).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~=$])")
_LINE_START = re.compile(r"[ \t]*\n[ \t]*")
_MD_HREF = str.maketrans(
    {
        "&": "&amp;",
        "\\": "%5C",
        "(": "%28",
        ")": "%29",
        " ": "%20",
        "<": "%3C",
        ">": "%3E",
        "'": "%27",
        '"': "%22",
        "`": "%60",
    }
)


def _m(text: str) -> str:
    """Text that Markdown shows as is: special characters escaped, HTML neutralised."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", strip_bidi_controls(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _m_text(text: str) -> str:
    """`_m`, and each line break a hard break (leading spaces would start a code block)."""
    return _LINE_START.sub("  \n", _m(text))


def _md_href(href: str) -> str:
    # Only http(s) URLs and /accounts/ paths get here (no spaces, no controls). What
    # could still end or bend a link destination is percent-encoded: a backslash
    # (an escape), parentheses and `<>` (its ends), quotes (python-markdown starts a
    # title at one, even without a space), a backtick (a code span across two links
    # beats the link). `&` is written `&amp;`, which every reader turns back into
    # `&`, so `&lt;` in a URL stays those four characters and a query keeps its `&`.
    return href.translate(_MD_HREF)


def _md_link(link: CitationLink, text: str) -> str:
    return f"[{text}]({_md_href(link.href)})"


def _source_item_markdown(source: NumberedSource) -> str:
    resolved = source.resolved
    line = f"**{_m(one_line(resolved.label))}**"
    if resolved.links:
        target = source.citation.target
        texts = link_texts(None if target is None else target.kind, len(resolved.links))
        line += " — " + ", ".join(
            _md_link(link, _m(text)) for link, text in zip(resolved.links, texts, strict=True)
        )
    quote = short_quote(source.citation.cited_text)
    if quote:
        line += f"  \n   > {_m(quote)}"
    return line


def _sources_markdown(sources: Sequence[NumberedSource]) -> str:
    return "\n".join(f"{source.number}. {_source_item_markdown(source)}" for source in sources)


def _chip_markdown(source: NumberedSource) -> str:
    links = source.resolved.links
    chip = f"\\[{source.number}\\]"
    if len(links) == 1:
        chip = _md_link(links[0], chip)
    return f"<sup>{chip}</sup>"


def _answer_markdown(
    text: str,
    inline: Sequence[StreamedRow],
    sources: Sequence[NumberedSource],
    web_url: str,
) -> str:
    answer = write_answer(
        text, inline, sources, web_url, write_text=_m_text, write_chip=_chip_markdown
    )
    return answer.lstrip(" \t")


def citation_markdown(
    citation: CitedRow, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its label in bold, its links, and what it quoted."""
    web_url = web_origin(web_url, base_url)
    source = NumberedSource(1, citation, resolve(citation, web_url))
    return _source_item_markdown(source)


def turn_markdown(
    turn: TurnLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A turn: the answer with numbered markers, then the numbered sources."""
    web_url = web_origin(web_url, base_url)
    sources = numbered_sources(turn.inline_citations, turn.citations, web_url=web_url)
    parts = [_answer_markdown(turn.text, turn.inline_citations, sources, web_url)]
    if sources:
        parts.append("**Sources**\n\n" + _sources_markdown(sources))
    if not turn.complete:
        reason = f": {_m(one_line(turn.error.message))}" if turn.error is not None else ""
        parts.append(f"*Incomplete turn{reason}\\.*")
    return "\n\n".join(parts)


def _message_parts_markdown(message: MessageLike, web_url: str) -> list[str]:
    sources = numbered_sources(message.inline_citations, message.citations, web_url=web_url)
    parts = [f"**{_m(one_line(message.role or 'message'))}**"]
    parts.append(_answer_markdown(message.text, message.inline_citations, sources, web_url))
    if sources:
        parts.append(_sources_markdown(sources))
    return parts


def message_markdown(
    message: MessageLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with markers, its numbered sources."""
    return "\n\n".join(_message_parts_markdown(message, web_origin(web_url, base_url)))


def session_markdown(
    session: SessionLike, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title, then each message with its citations."""
    web_url = web_origin(web_url, base_url)
    parts = [f"### {_m(one_line(session.title or session.id))}"]
    for message in session.messages:
        parts.extend(_message_parts_markdown(message, web_url))
    return "\n\n".join(parts)
