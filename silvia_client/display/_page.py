"""`page(obj)`: a standalone HTML page of a turn, a session, a message or a citation, to share.

The page is the object's view (`_html.py`, its stylesheet inside) in a small
HTML document: UTF-8, a viewport for phones, `color-scheme: light dark` (a
browser's dark mode darkens the page around the view too), and a Content
Security Policy that allows no script, no request and no form, only the
page's own styles and links out. `page(obj, path)` also writes it there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from ._html import citation_html, message_html, session_html, turn_html
from ._html_sources import escape
from ._protocols import CitedRow, MessageLike, SessionLike, TurnLike

__all__ = ["page"]

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
_PAGE_STYLE = (
    "<style>:root{color-scheme:light dark}"
    "body{margin:0 auto;padding:1rem;max-width:64rem;background:Canvas;color:CanvasText}"
    "</style>"
)


def _view(obj: object, web_url: str | None) -> tuple[str, str]:
    """(the page's title, the object's HTML view), by what the object has."""
    if hasattr(obj, "messages"):
        session = cast(SessionLike, obj)
        return session.title or session.id, session_html(session, web_url=web_url)
    if hasattr(obj, "complete"):
        return "Silvia answer", turn_html(cast(TurnLike, obj), web_url=web_url)
    if hasattr(obj, "role"):
        return "Silvia message", message_html(cast(MessageLike, obj), web_url=web_url)
    if hasattr(obj, "source") and hasattr(obj, "target"):
        return "Silvia citation", citation_html(cast(CitedRow, obj), web_url=web_url)
    raise TypeError(
        f"page() takes a Turn, a Session, a Message or a Citation, not {type(obj).__name__}"
    )


def page(
    obj: object,
    path: str | os.PathLike[str] | None = None,
    *,
    web_url: str | None = None,
    title: str | None = None,
) -> str:
    """A standalone HTML page of `obj`; with `path`, also written there (UTF-8).

    `web_url` (default `SILVIA_WEB_URL`) makes account links absolute, as the
    views take it: a page opened from a file has no web app to be relative to.
    """
    shown, view = _view(obj, web_url)
    document = (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{escape(title or shown)}</title>{_PAGE_STYLE}</head>\n"
        f"<body>{view}</body></html>\n"
    )
    if path is not None:
        Path(path).write_text(document, encoding="utf-8")
    return document
