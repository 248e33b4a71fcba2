"""HTML and Markdown views of turns, citations and sessions, for notebooks and UIs.

Labels are `resolve_citation`'s (no `provider`); server text is escaped, bidi controls
dropped; only http(s) URLs and `/accounts/` paths become links, absolute with `web_url=`
(default `SILVIA_WEB_URL`; `base_url=` is its deprecated alias).

- `_sources.py`   numbering sources and placing their marks (the `silvia` command's too)
- `_html.py`      the HTML views, their "Sources" (badges, links, quotes), the notes a view
                  gives once, a session's glance, `page`; `style.css`
- `_live.py`      `live(stream)` / `alive(stream)`: a turn streamed into a notebook cell
- `_markdown.py`  the Markdown views
"""

from .._text import strip_bidi_controls
from ._html import citation_html, message_html, page, session_html, turn_html
from ._live import alive, live
from ._markdown import citation_markdown, message_markdown, session_markdown, turn_markdown
from ._sources import NumberedSource, marked_segments, number_sources, numbered_sources

__all__ = [
    "NumberedSource",
    "alive",
    "citation_html",
    "citation_markdown",
    "live",
    "marked_segments",
    "message_html",
    "message_markdown",
    "number_sources",
    "numbered_sources",
    "page",
    "session_html",
    "session_markdown",
    "strip_bidi_controls",
    "turn_html",
    "turn_markdown",
]
