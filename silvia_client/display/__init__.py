"""HTML and Markdown views of turns, citations and sessions, for notebooks and UIs.

`Turn`, `Citation`, `Session` and `Message` render through these functions in
Jupyter (`_repr_html_`, `_repr_markdown_`). Citations are numbered by source,
in the order the answer first cites them (sources only the summary names come
after; `numbered_sources` and `marked_segments` number and place them, for the
`silvia` command too), and labelled as `resolve_citation` labels them, so
`provider` never shows. Everything that came from the server (text, titles,
quoted text, URLs) is escaped: markup in it shows as text, bidi controls are
dropped (`strip_bidi_controls`, the rule every view applies, the `silvia`
command's too), and only http(s) URLs and `/accounts/` paths ever become links.
A Markdown link destination is percent-encoded where a reader could end or
bend it, so every CommonMark reader and python-markdown reads the whole URL.

`web_url=` (the web app's origin, default `SILVIA_WEB_URL`) makes account links
absolute, as in `resolve_citation`; `base_url=` is its deprecated alias.

Rows are shown as the server sent them. In the list of sources, a source is
shown through the row that carries its final target (`target_for`'s rule: the
summary's, else the last streamed), so a turn and the same turn reloaded from
history show the same labels and links. Each chip in the answer is numbered by
its source and links by its own row: where a source's rows carry different
targets (accounts pooled as the turn went on), a chip opens what its row named.

The models' notebook hooks import this package, so it names the models for types
only (under `TYPE_CHECKING`), and imports none at run time.

Where things are:

- `_sources.py`   numbering the sources and placing their marks (`numbered_sources`,
                  `marked_segments`): what every view shares
- `_html.py`      the HTML views (`turn_html`, ...), the notes a view gives once, and
                  `page(obj, path)`: a standalone HTML page to share
- `_html_sources.py` a view's "Sources": badges, links that say what they open, quotes
- `_glance.py`    a session at a glance: one line of counts, and a bar by kind
- `_style.py`     the kinds' names, and `style()`: `style.css`, the one stylesheet
                  (host colours, light and dark)
- `_live.py`      `live(stream)` / `alive(stream)`: a turn streamed into a notebook cell
- `_markdown.py`  the Markdown views (`turn_markdown`, ...), their escaping and links
- `../_text.py`   `strip_bidi_controls`, which labels (`resolve_citation`) apply too
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
