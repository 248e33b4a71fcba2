"""Server text made fit to show: the scrubber, the bidi rule, and one cleaner per medium.

Private: the client, the views, `qa` and `cli` import it; a user never needs to
(the one public name here is `strip_bidi_controls`, re-exported by `display`).

- `Scrubber`: every string that comes from the server and may reach an
  exception, a log record or the command line goes through a client's
  scrubber first: status bodies, previews of 2xx bodies, `error` event
  messages, request ids, header values, and the text of transport errors
  (which may quote what the server sent). It blanks the client's bearer token,
  and in text meant for a message it escapes control characters (`escaped`,
  which the cleaners share), so a server cannot forge log lines or move a
  terminal's cursor. Tokens shorter than `MIN_SECRET_LENGTH` (8) characters are
  not blanked: they cannot be real secrets (`"t"` in tests), and blanking them
  would blank ordinary text.
- `protect_library_logs`: two things the SDK does not write itself log what the
  server sends, httpx (the reason phrase, at INFO) and httpcore (response
  headers, at DEBUG). A filter on their loggers blanks the token of every live
  client there too.
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

Each cleaner is idempotent. Blanking the token comes before any of them.
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from typing import Any

__all__ = [
    "BIDI_CONTROLS",
    "MIN_SECRET_LENGTH",
    "Scrubber",
    "carried",
    "escaped",
    "json_clean",
    "protect_library_logs",
    "strip_bidi_controls",
    "terminal_text",
    "xml_text",
]

MIN_SECRET_LENGTH = 8
BLANK = "<token>"

# C0 and C1 controls and DEL (a newline forges a log line, an escape sequence
# drives a terminal), the Unicode line and paragraph separators, and the bidi
# controls that reorder what follows them on screen.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escaped(match: re.Match[str]) -> str:
    """The matched characters as their visible escapes (`\\n`, `\\x1b`, `\\u202e`)."""
    return match.group().encode("unicode_escape").decode("ascii")


# The scrubber


class Scrubber:
    """Blanks one client's bearer token in what the server sends back.

    Shared by a client and its `with_options` copies, which share the token.
    """

    __slots__ = ("__weakref__", "_byte_forms", "_forms")

    def __init__(self, token: str | None) -> None:
        forms: list[str] = []
        if token is not None and len(token) >= MIN_SECRET_LENGTH:
            # As sent, and as a JSON string would spell it if it holds `"`, `\` or `/`.
            forms = [token, json.dumps(token)[1:-1], token.replace("/", "\\/")]
        self._forms = tuple(dict.fromkeys(forms))
        self._byte_forms = tuple(form.encode("utf-8") for form in self._forms)
        if self._forms:
            _LIVE.add(self)

    def __bool__(self) -> bool:
        """Whether there is a token to blank."""
        return bool(self._forms)

    def blank(self, text: str) -> str:
        """`text` with the token blanked."""
        for form in self._forms:
            if form in text:
                text = text.replace(form, BLANK)
        return text

    def text(self, text: str) -> str:
        """`text`, fit for a message: the token blanked, every control character escaped."""
        return _CONTROLS.sub(escaped, self.blank(text))

    def optional(self, text: str | None) -> str | None:
        """`text(...)` of a value that may be missing (a request id, say)."""
        return None if text is None else self.text(text)

    def bytes(self, body: bytes) -> bytes:
        """`body` with the token blanked, before any of it is shown."""
        for form in self._byte_forms:
            if form in body:
                body = body.replace(form, BLANK.encode())
        return body

    def value(self, value: Any) -> Any:
        """A parsed JSON body with the token blanked wherever it holds it (escaped or not)."""
        if not self._forms or isinstance(value, (int, float, bool)) or value is None:
            return value
        try:
            # `default=str`: a number kept as a `Decimal` (`_json.py`) holds no token, and
            # must not make the rest go unscrubbed; in a scrubbed copy it is its digits.
            dumped = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return value
        if not any(form in dumped for form in self._forms):
            return value
        return json.loads(self.blank(dumped))

    def exception(self, error: BaseException) -> BaseException:
        """`error`, and every error behind it, with the token blanked in their arguments.

        Transport errors may quote what the server sent (a malformed header
        line, say); they travel on as the `__cause__` of the SDK's own error.
        """
        if not self._forms:
            return error
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            text = repr(current.args)
            if any(form in text for form in self._forms):
                current.args = tuple(
                    self.blank(arg) if isinstance(arg, str) else self.blank(repr(arg))
                    for arg in current.args
                )
            current = current.__cause__ or current.__context__
        return error

    def __repr__(self) -> str:
        return "Scrubber()"


_LIVE: weakref.WeakSet[Scrubber] = weakref.WeakSet()
_LIBRARY_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "hpack.hpack",
)


def _blank_tokens(record: logging.LogRecord) -> bool:
    """A log filter: every live client's token blanked in a record an HTTP library makes."""
    scrubbers = tuple(_LIVE)
    if not scrubbers:
        return True
    try:
        message = record.getMessage()
    except Exception:  # a record that cannot be formatted is the handler's to report
        return True
    clean = message
    for scrubber in scrubbers:
        clean = scrubber.blank(clean)
    if clean != message:
        record.msg, record.args = clean, ()
    return True


def protect_library_logs() -> None:
    """Put the token filter on the HTTP libraries' loggers (a logger adds it once)."""
    for name in _LIBRARY_LOGGERS:
        logging.getLogger(name).addFilter(_blank_tokens)


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
