"""The Markdown readers the Markdown views are checked with, each giving HTML.

python-markdown (the `markdown` package) is looser than CommonMark (a quote in a
link destination starts a title there); markdown-it-py follows CommonMark, as
Jupyter's reader does. Both are set up as a notebook would use them: raw HTML
allowed, so the views' own `<sup>` chips work and nothing else may sneak through.
"""

from __future__ import annotations

from collections.abc import Callable

import markdown
from markdown_it import MarkdownIt

_COMMONMARK = MarkdownIt("commonmark")  # html=True: raw HTML passes, as in Jupyter


def python_markdown(text: str) -> str:
    return markdown.markdown(text)


def commonmark(text: str) -> str:
    rendered: str = _COMMONMARK.render(text)
    return rendered


READERS: dict[str, Callable[[str], str]] = {
    "python-markdown": python_markdown,
    "markdown-it": commonmark,
}
