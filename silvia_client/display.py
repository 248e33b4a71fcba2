"""HTML and Markdown views of turns, citations and sessions, for notebooks and UIs.

`Turn`, `Citation`, `Session` and `Message` render through these functions in
Jupyter (`_repr_html_`, `_repr_markdown_`). Citations are numbered by source,
in the order the answer first cites them (sources only the summary names come
after), and labelled as `resolve_citation` labels them, so `provider` never
shows. Everything that came from the server (text, titles, quoted text, URLs)
is escaped: markup in it shows as text, bidi controls are dropped (`_bidi.py`),
and only http(s) URLs and `/accounts/` paths ever become links. A Markdown link
destination is percent-encoded where a reader could end or bend it, so every
CommonMark reader and python-markdown reads the whole URL.

`web_url=` (the web app's origin, default `SILVIA_WEB_URL`) makes account links
absolute, as in `resolve_citation`; `base_url=` is its deprecated alias.

Rows are shown as the server sent them. In the list of sources, a source is
shown through the row that carries its final target (`target_for`'s rule: the
summary's, else the last streamed), so a turn and the same turn reloaded from
history show the same labels and links. Each chip in the answer is numbered by
its source and links by its own row: where a source's rows carry different
targets (accounts pooled as the turn went on), a chip opens what its row named.

The same numbering and placement serve the `silvia` command (`cli/_render.py`):
`numbered_sources` and `marked_segments`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ._bidi import strip_bidi_controls
from .citations import Citation, CitationLink, InlineCitation, ResolvedCitation, resolve_citation
from .citations._final import final_targets
from .citations._links import web_origin

if TYPE_CHECKING:
    from .chat import Turn
    from .sessions import Message, Session

__all__ = [
    "NumberedSource",
    "citation_html",
    "citation_markdown",
    "marked_segments",
    "message_html",
    "message_markdown",
    "number_sources",
    "numbered_sources",
    "session_html",
    "session_markdown",
    "turn_html",
    "turn_markdown",
]

_QUOTE_CHARS = 200
# Every character Markdown (CommonMark, GFM, and Jupyter's `$` math) may read as syntax,
# but `&`, `<` and `>`, which become entities (a backslash before one would show).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~=$])")
# Jupyter typesets `$...$` in outputs with MathJax unless told not to (2 and 3).
_NO_MATH = "tex2jax_ignore mathjax_ignore"
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


def number_sources(citations: Iterable[Citation]) -> dict[str, int]:
    """Each source's number, 1, 2, ..., in order of first appearance."""
    numbers: dict[str, int] = {}
    for citation in citations:
        numbers.setdefault(citation.source, len(numbers) + 1)
    return numbers


class NumberedSource:
    """One cited source: its number, the citation that stands for it, and how it resolves."""

    __slots__ = ("citation", "number", "resolved")

    def __init__(self, number: int, citation: Citation, resolved: ResolvedCitation) -> None:
        self.number = number
        self.citation = citation
        self.resolved = resolved

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
    """Each source once, numbered as `number_sources(inline + citations)` numbers it.

    A source is represented by a row carrying its final target (the summary's,
    else its last streamed one, as `Turn.target_for` has it): the first such row
    of `citations`, else of `inline`. `web_url` makes account links absolute.
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
    """`text` cut at each streamed citation's offset, with the source numbers to mark there.

    Citations without an offset (rows reloaded from history) or with one outside
    the text are not placed. Several citations at one offset give one mark per
    source, in the order they streamed. The pieces joined give back `text`.
    """
    return [
        (piece, [number for number, _ in marks])
        for piece, marks in _marked_rows(text, inline, numbers)
    ]


def _marked_rows(
    text: str, inline: Sequence[InlineCitation], numbers: dict[str, int]
) -> list[tuple[str, list[tuple[int, InlineCitation]]]]:
    """`marked_segments`, each mark with the row it stands for (its source's first there)."""
    placed = sorted(
        (c for c in inline if c.offset is not None and 0 <= c.offset <= len(text)),
        key=lambda c: c.offset or 0,
    )
    pieces: list[tuple[str, list[tuple[int, InlineCitation]]]] = []
    start = 0
    for citation in placed:
        offset = citation.offset or 0
        number = numbers[citation.source]
        if pieces and offset == start:
            if all(number != marked for marked, _ in pieces[-1][1]):
                pieces[-1][1].append((number, citation))
            continue
        pieces.append((text[start:offset], [(number, citation)]))
        start = offset
    pieces.append((text[start:], []))
    return pieces


def _chip_source(
    number: int, row: InlineCitation, listed: NumberedSource, web_url: str
) -> NumberedSource:
    """What a chip shows: its source's number, and its own row's label and links."""
    shown = listed.citation
    if row.target == shown.target and row.title == shown.title:
        return listed  # resolves alike: the usual case, where a source keeps one target
    return NumberedSource(number, row, resolve_citation(row, web_url=web_url))


def _quote(text: str | None) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())


# HTML ------------------------------------------------------------------------------


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
    quote = _quote(source.citation.cited_text)
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
    inline: Sequence[InlineCitation],
    sources: Sequence[NumberedSource],
    web_url: str,
) -> str:
    by_number = {source.number: source for source in sources}
    numbers = {source.source: source.number for source in sources}
    out = []
    for piece, marks in _marked_rows(text, inline, numbers):
        out.append(_text_html(piece))
        out.extend(
            _chip_html(_chip_source(number, row, by_number[number], web_url))
            for number, row in marks
        )
    return "".join(out)


def citation_html(
    citation: Citation, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its label, its links, and what it quoted."""
    web_url = web_origin(web_url, base_url)
    source = NumberedSource(1, citation, resolve_citation(citation, web_url=web_url))
    return f'<div class="silvia-citation {_NO_MATH}">{_source_item_html(source)}</div>'


def _incomplete_html(turn: Turn) -> str:
    if turn.complete:
        return ""
    reason = f": {_h(turn.error.message)}" if turn.error is not None else ""
    return f'<p class="silvia-note"><em>Incomplete turn{reason}.</em></p>'


def turn_html(turn: Turn, *, web_url: str | None = None, base_url: str | None = None) -> str:
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


def _message_body_html(message: Message, web_url: str) -> str:
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
    message: Message, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with chips, its numbered sources."""
    body = _message_body_html(message, web_origin(web_url, base_url))
    return f'<div class="silvia-messages {_NO_MATH}">{body}</div>'


def session_html(
    session: Session, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title, then each message with its citations."""
    web_url = web_origin(web_url, base_url)
    title = _h(session.title or session.id)
    body = "".join(_message_body_html(message, web_url) for message in session.messages)
    return f'<div class="silvia-session {_NO_MATH}"><h3>{title}</h3>{body}</div>'


# Markdown ----------------------------------------------------------------------------


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
    line = f"**{_m(_one_line(resolved.label))}**"
    if resolved.links:
        line += " — " + ", ".join(
            _md_link(link, _m(_one_line(link.label))) for link in resolved.links
        )
    quote = _quote(source.citation.cited_text)
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
    inline: Sequence[InlineCitation],
    sources: Sequence[NumberedSource],
    web_url: str,
) -> str:
    by_number = {source.number: source for source in sources}
    numbers = {source.source: source.number for source in sources}
    out = []
    for piece, marks in _marked_rows(text, inline, numbers):
        out.append(_m_text(piece))
        out.extend(
            _chip_markdown(_chip_source(number, row, by_number[number], web_url))
            for number, row in marks
        )
    return "".join(out).lstrip(" \t")


def citation_markdown(
    citation: Citation, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One citation: its label in bold, its links, and what it quoted."""
    web_url = web_origin(web_url, base_url)
    source = NumberedSource(1, citation, resolve_citation(citation, web_url=web_url))
    return _source_item_markdown(source)


def turn_markdown(turn: Turn, *, web_url: str | None = None, base_url: str | None = None) -> str:
    """A turn: the answer with numbered markers, then the numbered sources."""
    web_url = web_origin(web_url, base_url)
    sources = numbered_sources(turn.inline_citations, turn.citations, web_url=web_url)
    parts = [_answer_markdown(turn.text, turn.inline_citations, sources, web_url)]
    if sources:
        parts.append("**Sources**\n\n" + _sources_markdown(sources))
    if not turn.complete:
        reason = f": {_m(_one_line(turn.error.message))}" if turn.error is not None else ""
        parts.append(f"*Incomplete turn{reason}\\.*")
    return "\n\n".join(parts)


def _message_parts_markdown(message: Message, web_url: str) -> list[str]:
    sources = numbered_sources(message.inline_citations, message.citations, web_url=web_url)
    parts = [f"**{_m(_one_line(message.role or 'message'))}**"]
    parts.append(_answer_markdown(message.text, message.inline_citations, sources, web_url))
    if sources:
        parts.append(_sources_markdown(sources))
    return parts


def message_markdown(
    message: Message, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """One message of a session: its role, its text with markers, its numbered sources."""
    return "\n\n".join(_message_parts_markdown(message, web_origin(web_url, base_url)))


def session_markdown(
    session: Session, *, web_url: str | None = None, base_url: str | None = None
) -> str:
    """A session: its title, then each message with its citations."""
    web_url = web_origin(web_url, base_url)
    parts = [f"### {_m(_one_line(session.title or session.id))}"]
    for message in session.messages:
        parts.extend(_message_parts_markdown(message, web_url))
    return "\n\n".join(parts)
