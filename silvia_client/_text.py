"""Server text made fit to show: the bidi rule (public as `display.strip_bidi_controls`,
here because labels need it), `escaped`, and `terminal_text`, the cleaner that `qa` and
`cli` share (each keeps its other media's own: XML and JSON in `qa/report.py`, a stream's
encoding in `cli/_output.py`). Blanking the token (the client's scrubber, `_base.py`) comes
first.
"""

from __future__ import annotations

import re


def escaped(match: re.Match[str]) -> str:
    """The matched characters as their visible escapes (`\\n`, `\\x1b`, `\\u202e`)."""
    return match.group().encode("unicode_escape").decode("ascii")


# An embedding, override or isolate control opens a scope that reorders the text after
# it on screen: left open in a title, an override reverses the rest of the answer and the
# labels around it (visual spoofing). The marks U+200E, U+200F and U+061C open no scope,
# and right-to-left names need them: they stay.
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def strip_bidi_controls(text: str) -> str:
    """`text` without embedding, override or isolate controls (bidi marks stay)."""
    if text.isascii():  # the common case, and a cheap one
        return text
    return _BIDI_CONTROL.sub("", text)


# A str holds a pair as one code point, so any surrogate is alone. A raw pattern: the
# source holds no lone surrogate (Python 3.13.0 cannot compile a module whose constants do).
_TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def terminal_text(text: str) -> str:
    """`text` fit for a terminal, a plain-text report or a log line: newlines and tabs stay,
    every other control (ESC, CSI), U+2028/U+2029 and a lone surrogate become escapes, bidi
    controls go. It cannot drive a terminal, forge a link, reorder text, or fail to encode."""
    if text.isascii() and text.isprintable():  # the common case, and a cheap one
        return text
    return _TERMINAL.sub(escaped, strip_bidi_controls(text))
