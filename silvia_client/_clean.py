"""One cleaner per output medium: server text made fit for where it is written.

Every writer of server text uses these (the `silvia` command, the QA reports,
the testing kit):

- `terminal_text`: a terminal, a plain-text report, a log. C0 controls but
  `\n` and `\t`, C1 controls (so every ESC and CSI sequence), DEL, the line
  and paragraph separators and lone surrogates are written as their visible
  escapes (`\\x1b`, `\\x9b`, `\\ud800`); bidi controls are dropped, as every
  view drops them (`_bidi.py`). What is left cannot drive a terminal, forge a
  hyperlink, reorder the text after it, or fail to encode as UTF-8.
- `xml_text`: XML 1.0 (JUnit): `terminal_text`, and the characters XML 1.0
  forbids besides (U+FFFE, U+FFFF) escaped too, so the document is well-formed.
- `json_clean`: a JSON value for a report file, every string (keys too) through
  `terminal_text`, so it dumps and encodes, and a reader shows it safely.
- `carried`: text as a stream's encoding can carry it (what it cannot, escaped).

Each is idempotent: cleaning cleaned text changes nothing. They are public as
`silvia_client.display.terminal_text`, `xml_text`, `json_clean` and `carried`
(the QA reports and the `silvia` command use them from there). Blanking the
bearer token is the scrubber's job (`_scrub.py`), before any of these; its
`escaped` writes the escapes here too.
"""

from __future__ import annotations

import re
from typing import Any

from ._bidi import strip_bidi_controls
from ._scrub import escaped

__all__ = ["carried", "json_clean", "terminal_text", "xml_text"]


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
