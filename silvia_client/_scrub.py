"""The one scrubber: what the server sent, made fit to show.

Every string that comes from the server and may reach an exception, a log
record or the command line goes through a client's `Scrubber` first: status
bodies, previews of 2xx bodies, `error` event messages, request ids, header
values, and the text of transport errors (which may quote what the server
sent). It blanks the client's bearer token, and in text meant for a message it
escapes control characters (`escaped`, which `_clean.py`'s cleaners share), so
a server cannot forge log lines or move a terminal's cursor.

Tokens shorter than `MIN_SECRET_LENGTH` (8) characters are not blanked: they
cannot be real secrets (`"t"` in tests), and blanking them would blank
ordinary text.

Two things the SDK does not write itself log what the server sends: httpx (the
reason phrase, at INFO) and httpcore (response headers, at DEBUG). A filter on
their loggers blanks the token of every live client there too
(`protect_library_logs`).
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from typing import Any

__all__ = ["MIN_SECRET_LENGTH", "Scrubber", "escaped", "protect_library_logs"]

MIN_SECRET_LENGTH = 8
BLANK = "<token>"

# C0 and C1 controls and DEL (a newline forges a log line, an escape sequence
# drives a terminal), the Unicode line and paragraph separators, and the bidi
# controls that reorder what follows them on screen.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escaped(match: re.Match[str]) -> str:
    """The matched characters as their visible escapes (`\\n`, `\\x1b`, `\\u202e`)."""
    return match.group().encode("unicode_escape").decode("ascii")


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
