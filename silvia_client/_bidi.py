"""Bidirectional-text controls in server strings: the one rule every view applies.

An embedding, override or isolate control (U+202A-U+202E, U+2066-U+2069) opens
a scope that changes how the text after it is ordered on screen. Left open in a
title, a right-to-left override reverses the rest of the answer and the link
labels around it (visual spoofing), so every string from the server loses them
before it is shown: labels (`resolve_citation`), the HTML and Markdown views
(`display`) and the terminal (`cli/_render.py`). It is public as
`silvia_client.display.strip_bidi_controls`, for the `silvia` command (which
uses only the public API) and for anyone who shows server text themselves; it
lives here, outside `display`, because labels need it and importing `display`
would load the views.

The marks U+200E (LRM), U+200F (RLM) and U+061C (ALM) stay: they open no scope
and order text exactly as any left-to-right or right-to-left letter does, which
right-to-left names legitimately need and which a server could write anyway.
"""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "strip_bidi_controls"]

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def strip_bidi_controls(text: str) -> str:
    """`text` without embedding, override or isolate controls (bidi marks stay)."""
    if text.isascii():  # the common case, and a cheap one
        return text
    return _BIDI_CONTROL.sub("", text)
