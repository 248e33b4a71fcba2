"""Answers and their sources on a terminal: for `silvia chat`, `session show`, `record` and `demo`.

`TerminalRenderer` writes a streamed turn as it arrives (`event`: the text, and a
marker `[n]` where each citation streamed in, numbered as the HTML views number
sources), a finished answer (`answer`: markers at the citations' offsets) and the
numbered sources (`sources`: label, kind, links, all from `resolve_citation`, so
never a provider). Server text goes through `clean` (the core's terminal cleaner):
controls escaped, bidi controls dropped. Links are OSC 8 hyperlinks on a terminal
that is not `dumb` when `NO_COLOR` is not set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from .._text import terminal_text as clean  # controls escaped (not tabs, newlines), bidi dropped
from ..chat import CitationEvent, TextEvent
from ..display import marked_segments, numbered_sources
from ._common import is_terminal

if TYPE_CHECKING:
    from ..chat import ChatEvent
    from ..citations import Citation, InlineCitation

# What each target kind is, in words. Kinds only: never a provider.
_KIND_WORDS = {
    "web": "web page",
    "tax_reference": "tax document",
    "card_document": "card document",
    "mortgage_reference": "mortgage document",
    "market_data": "market data",
    "analysis": "analysis",
    "account": "your account",
    "accounts": "your accounts",
    "portfolio": "your portfolio",
}


def supports_hyperlinks(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return is_terminal(stream) and env.get("TERM", "") != "dumb" and not env.get("NO_COLOR")


def hyperlink(href: str, text: str) -> str:
    return f"\x1b]8;;{clean(href)}\x1b\\{clean(text)}\x1b]8;;\x1b\\"


_WORDS = re.compile(r"\s+|\S+")
_NARROWEST = 20  # columns: a terminal narrower than this, or of no known width, is not wrapped


def _terminal_width(out: TextIO) -> int | None:
    """The terminal's width less one; None (no wrapping) off a terminal or at 0 columns."""
    try:
        columns = os.get_terminal_size(out.fileno()).columns if is_terminal(out) else 0
    except (AttributeError, ValueError, OSError):  # a closed or a bare stream
        return None
    return columns - 1 if columns > _NARROWEST else None


class TerminalRenderer:
    """Writes answers, markers and sources to `out`.

    `links`: OSC 8 hyperlinks (default: `supports_hyperlinks(out)`). `web_url`: the
    web app's origin for account links (None: `SILVIA_WEB_URL`, else relative
    paths). `width`: where a streamed answer wraps, at spaces (default: the
    terminal's; None never wraps); a word longer than the line is written whole.
    """

    def __init__(
        self,
        out: TextIO,
        *,
        links: bool | None = None,
        web_url: str | None = None,
        width: int | None = -1,
    ) -> None:
        self.out = out
        self.links: bool = supports_hyperlinks(out) if links is None else links
        self.web_url = web_url
        self.width = _terminal_width(out) if width == -1 else width
        self.numbers: dict[str, int] = {}  # source -> its number, as streamed so far
        self._written = 0  # characters of answer text written
        self._marked: tuple[int, set[int]] = (-1, set())  # numbers marked at that offset
        self.mid_line: bool = False  # whether the last thing written left a line open
        self._word = ""  # with a width: the word under way, written once it is whole
        self._column = 0  # with a width: characters on the line written last

    def write(self, text: str) -> None:
        self._flush_word()
        self._put(text)

    def _put(self, text: str) -> None:
        if text:
            # The state first: a Ctrl-C inside the write must find the line it left open,
            # so that "interrupted" starts a line of its own.
            self.mid_line = not text.endswith("\n")
            line_start = text.rfind("\n") + 1
            self._column = len(text) - line_start + (self._column if line_start == 0 else 0)
            self.out.write(text)
            self.out.flush()

    def end_line(self) -> None:
        self._flush_word()
        if self.mid_line:
            self.write("\n")

    def text(self, text: str) -> None:
        self._written += len(text)
        if self.width is None:
            self.write(clean(text))
            return
        for piece in _WORDS.findall(clean(text)):
            if not piece[0].isspace():
                self._word += piece  # a word may come in several pieces: wait for its end
                continue
            self._flush_word()
            for space in piece:
                if space == "\n" or self._column >= self.width:  # a full line breaks here
                    self._put("\n")
                elif self._column > 0:  # no space at the start of a line it opened
                    self._put(space)

    def _flush_word(self) -> None:
        word, self._word = self._word, ""
        if not word:
            return
        if self.width is not None and self._column > 0 and self._column + len(word) > self.width:
            self._put("\n")
        self._put(word)

    def citation(self, citation: InlineCitation) -> None:
        """A streamed citation's marker, unless its source is marked right here already."""
        number = self.numbers.setdefault(citation.source, len(self.numbers) + 1)
        offset, marked = self._marked
        if offset != self._written:
            offset, marked = self._written, set()
            self._marked = (offset, marked)
        if number not in marked:
            marked.add(number)
            if self.width is None:
                self.write(f"[{number}]")
            else:  # a marker stays with the word it follows
                self._word += f"[{number}]"

    def event(self, event: ChatEvent) -> None:
        if isinstance(event, TextEvent):
            self.text(event.text)
        elif isinstance(event, CitationEvent):
            self.citation(event.citation)

    def answer(
        self, text: str, inline: Sequence[InlineCitation], citations: Sequence[Citation] = ()
    ) -> None:
        self._flush_word()
        numbers = {s.source: s.number for s in numbered_sources(inline, citations)}
        for piece, marks in marked_segments(text, inline, numbers):
            self.out.write(clean(piece) + "".join(f"[{number}]" for number in marks))
        self.out.write("\n")
        self.out.flush()

    def sources(
        self, inline: Sequence[Citation], citations: Sequence[Citation], *, heading: str = "Sources"
    ) -> None:
        self._flush_word()
        listed = numbered_sources(inline, citations, web_url=self.web_url)
        if not listed:
            self.out.write("\nNo sources cited.\n")
            self.out.flush()
            return
        lines = ["", heading]
        for source in listed:
            resolved, target = source.resolved, source.citation.target
            if target is None:
                kind = "no target: shown by its source and title"
            else:  # what the target is, in words; never its provider
                kind = _KIND_WORDS.get(target.kind, target.kind)
                accounts = getattr(target, "accounts", None)
                kind = f"{len(accounts)} of {kind}" if accounts is not None else kind
            label = clean(" ".join(resolved.label.split()))
            lines.append(f"  [{source.number}] {label} ({kind})")
            for link in resolved.links:
                prefix = "" if link.label == resolved.label else f"{clean(link.label)}: "
                web = self.links and link.href.startswith(("http://", "https://"))
                href = hyperlink(link.href, link.href) if web else clean(link.href)
                lines.append(f"      {prefix}{href}")
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()
