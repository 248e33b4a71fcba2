"""Server text made fit to show: the bidi rule (public as `display.strip_bidi_controls`,
here because labels need it), and one idempotent cleaner per medium, for the client, the
views, `qa` and `cli`. Blanking the token (the client's scrubber, `_base.py`) comes first.
"""

from __future__ import annotations

import re
from typing import Any


def escaped(match: re.Match[str]) -> str:
    """The matched characters as their visible escapes (`\\n`, `\\x1b`, `\\u202e`)."""
    return match.group().encode("unicode_escape").decode("ascii")


# An embedding, override or isolate control opens a scope that reorders the text after
# it on screen: left open in a title, an override reverses the rest of the answer and the
# labels around it (visual spoofing). The marks U+200E, U+200F and U+061C open no scope,
# and right-to-left names need them: they stay.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def strip_bidi_controls(text: str) -> str:
    """`text` without embedding, override or isolate controls (bidi marks stay)."""
    if text.isascii():  # the common case, and a cheap one
        return text
    return _BIDI_CONTROL.sub("", text)


# A str holds a pair as one code point, so any surrogate is alone. A raw pattern: the
# source holds no lone surrogate (Python 3.13.0 cannot compile a module whose constants do).
_TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# What XML 1.0 forbids beyond those (its Char production): U+FFFE and U+FFFF.
_XML_EXTRA = re.compile("[\ufffe\uffff]")


def terminal_text(text: str) -> str:
    """`text` fit for a terminal, a plain-text report or a log line: newlines and tabs stay,
    every other control (ESC, CSI), U+2028/U+2029 and a lone surrogate become escapes, bidi
    controls go. It cannot drive a terminal, forge a link, reorder text, or fail to encode."""
    if text.isascii() and text.isprintable():  # the common case, and a cheap one
        return text
    return _TERMINAL.sub(escaped, strip_bidi_controls(text))


def xml_text(text: str) -> str:
    """`text` fit for XML 1.0 (JUnit): `terminal_text`, and U+FFFE/U+FFFF escaped."""
    return _XML_EXTRA.sub(escaped, terminal_text(text))


def json_clean(value: Any) -> Any:
    """A JSON value for a report file, every string in it (keys too) through `terminal_text`."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {
            (terminal_text(key) if isinstance(key, str) else key): json_clean(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [json_clean(item) for item in value]
    return value


def carried(text: str, encoding: str | None, errors: str | None = None) -> str:
    """`text` as a stream in `encoding` (and `errors`; None, a `StringIO`, takes anything)
    can write it: else backslash-escaped."""
    if encoding is None or text.isascii():
        return text
    try:
        text.encode(encoding, errors or "strict")
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    return text
