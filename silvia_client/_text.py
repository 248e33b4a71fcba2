"""Server text made fit to show: the bidi rule, and one cleaner per medium.

Private: the client, the views, `qa` and `cli` import it; a user never needs to
(the one public name here is `strip_bidi_controls`, re-exported by `display`).

- `strip_bidi_controls`: the rule every view applies. An embedding, override
  or isolate control (U+202A-U+202E, U+2066-U+2069) opens a scope that
  reorders the text after it on screen: left open in a title, a right-to-left
  override reverses the rest of the answer and the link labels around it
  (visual spoofing). So labels (`resolve_citation`), the HTML and Markdown
  views (`display`) and the terminal (`cli/_render.py`) drop them. The marks
  U+200E (LRM), U+200F (RLM) and U+061C (ALM) stay: they open no scope, order
  text as any letter does, and right-to-left names need them. It lives here,
  outside `display`, because labels need it and importing `display` would load
  the views.
- `terminal_text`: a terminal, a plain-text report, a log. C0 controls but
  `\\n` and `\\t`, C1 controls (so every ESC and CSI sequence), DEL, the line
  and paragraph separators and lone surrogates are written as their visible
  escapes (`\\x1b`, `\\x9b`, `\\ud800`); bidi controls are dropped. What is
  left cannot drive a terminal, forge a hyperlink, reorder the text after it,
  or fail to encode as UTF-8.
- `xml_text`: XML 1.0 (JUnit): `terminal_text`, and the characters XML 1.0
  forbids besides (U+FFFE, U+FFFF) escaped too, so the document is well-formed.
- `json_clean`: a JSON value for a report file, every string (keys too) through
  `terminal_text`, so it dumps and encodes, and a reader shows it safely.
- `carried`: text as a stream's encoding can carry it (what it cannot, escaped).

Each cleaner is idempotent. Blanking the token (the client's `Scrubber`, `_base.py`)
comes before any of them; `escaped` is the escape the scrubber and the cleaners share.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "BIDI_CONTROLS",
    "carried",
    "escaped",
    "json_clean",
    "strip_bidi_controls",
    "terminal_text",
    "xml_text",
]


def escaped(match: re.Match[str]) -> str:
    """The matched characters as their visible escapes (`\\n`, `\\x1b`, `\\u202e`)."""
    return match.group().encode("unicode_escape").decode("ascii")


# The bidi rule, and the cleaners

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def strip_bidi_controls(text: str) -> str:
    """`text` without embedding, override or isolate controls (bidi marks stay)."""
    if text.isascii():  # the common case, and a cheap one
        return text
    return _BIDI_CONTROL.sub("", text)


# What a terminal must never get raw: C0 but tab and newline, DEL and C1 (ESC, CSI,
# OSC ... start with one), the line and paragraph separators, and lone surrogates
# (a str holds a pair as one code point, so any surrogate left is alone).
# A raw pattern: `re` reads the escapes, so the source holds no lone surrogate (Python
# 3.13.0 cannot compile a module whose constants do, as pytest's rewriter does).
_TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# What XML 1.0 forbids beyond those (its Char production): U+FFFE and U+FFFF.
_XML_EXTRA = re.compile("[\ufffe\uffff]")


def terminal_text(text: str) -> str:
    """`text` fit for a terminal, a plain-text report or a log line (see the module's docstring).

    Newlines and tabs stay; every other control, and a lone surrogate, is
    written as its escape; bidi controls are dropped.
    """
    if text.isascii() and text.isprintable():  # the common case, and a cheap one
        return text
    return _TERMINAL.sub(escaped, strip_bidi_controls(text))


def xml_text(text: str) -> str:
    """`text` fit for XML 1.0 text or an attribute: `terminal_text`, and U+FFFE/U+FFFF escaped."""
    return _XML_EXTRA.sub(escaped, terminal_text(text))


def json_clean(value: Any) -> Any:
    """A JSON value with every string in it (keys too) through `terminal_text`.

    Lists, tuples and dicts are copied; other values are returned as they are.
    """
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
    """`text` as a stream in `encoding` (with its `errors` handler) can write it.

    The same text when it can; else each character it cannot carry
    backslash-escaped. No encoding (a `StringIO`) carries anything.
    """
    if encoding is None or text.isascii():
        return text
    try:
        text.encode(encoding, errors or "strict")
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    return text
