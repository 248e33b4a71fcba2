"""The wire's two decoders: SSE (byte chunks in, httpx-sse's `ServerSentEvent`s out), and
JSON as the wire carries it.

`SSEDecoder` follows the WHATWG HTML standard's "event stream interpretation"
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
and differs from httpx-sse's `EventSource` where a long chat stream would notice:

* the body is UTF-8 whatever the Content-Type says, invalid bytes replaced, one
  leading byte-order mark dropped;
* a line ends at CR, LF or CRLF, even when a chunk ends between the CR and the LF;
* a blank line dispatches an event only if a `data` line came since the last one
  (a keep-alive comment never becomes a phantom event);
* an `id` holding NUL is ignored; `retry` is kept when `int` reads it, per event,
  while the last `id` stays for later events;
* an event not ended by a blank line when the body ends is dropped;
* `max_event_bytes` (None: none) bounds a line, and an event's data (its `data` lines
  joined by LF), in bytes of UTF-8: `EventTooLarge` as soon as that much has arrived.

`loads` is `json.loads` keeping every number's value: an integer past
`sys.get_int_max_str_digits()` (the program's setting) and a number past a float's
range become a `decimal.Decimal`. `most_values` bounds, before decoding, how many
values `loads` would build. The fast path (CONTRIBUTING, "Fast paths"): with `FAST_PATH`
on, pydantic's parser reads the events and the history, and `loads` whatever it refuses
(nesting past 200, a lone surrogate, an integer past 4,300 digits, anything not JSON) or
whose result `holds_infinity`. `FAST` is the switch `benchmarks/ablation.py` turns off;
`FAST_PATH` is also off where pydantic-core misreads a `\\u` escape.
"""

from __future__ import annotations

import codecs
import json
import sys
from contextlib import suppress
from decimal import Decimal
from math import isinf
from typing import Any

from httpx_sse import ServerSentEvent
from pydantic_core import from_json


class EventTooLarge(Exception):
    """A line, or an event's data, passed `max_event_bytes` (`limit`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"event stream line or event data over the limit of {limit} bytes")
        self.limit = limit


class SSEDecoder:
    """Feed it a body's byte chunks, cut anywhere; it gives back the events each one ends.

    When a chunk passes the limit, `feed` still returns the events that chunk
    ended before it; the next call (`feed` or `close`) raises `EventTooLarge`.
    """

    def __init__(self, max_event_bytes: int | None = None) -> None:
        if max_event_bytes is not None and max_event_bytes < 0:
            raise ValueError("max_event_bytes must be None or at least 0")
        self._limit = sys.maxsize if max_event_bytes is None else max_event_bytes
        # utf-8-sig drops one leading byte-order mark, even one cut across chunks.
        self._text = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._after_cr = False  # the last text ended in CR: an LF next ends no other line
        self._partial: list[str] = []  # the line not ended yet, a piece a chunk
        self._partial_bytes = 0
        self._event = ""
        self._data: list[str] = []
        self._data_bytes = 0  # each data line's bytes, plus one for the LF joining it
        self._last_id = ""
        self._retry: int | None = None
        self._too_large: EventTooLarge | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events `chunk` ends, in order."""
        if self._too_large is not None:
            raise self._too_large
        text = self._text.decode(chunk)
        if not text:
            return []
        if self._after_cr and text[0] == "\n":
            text = text[1:]
        self._after_cr = text.endswith("\r")
        *lines, rest = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        events: list[ServerSentEvent] = []
        try:
            for line in lines:
                self._line(line, events)
            if rest:
                self._partial.append(rest)
                self._partial_bytes += len(rest.encode())
                self._check(self._partial_bytes)
        except EventTooLarge as error:
            self._too_large = error
            if not events:
                raise
            return events
        if len(self._data) > 1:
            # One string per chunk, not per line: many short data lines would
            # each be an object many times its size.
            self._data[:] = ["\n".join(self._data)]
        return events

    def close(self) -> list[ServerSentEvent]:
        """The body has ended: what is left (a line without its end, its event) is dropped."""
        if self._too_large is not None:
            raise self._too_large
        return []

    def _check(self, size: int) -> None:
        if size > self._limit:
            raise EventTooLarge(self._limit)

    def _line(self, line: str, events: list[ServerSentEvent]) -> None:
        if self._partial:  # the line the last chunk began
            line = "".join(self._partial) + line
            self._partial.clear()
            self._partial_bytes = 0
        if len(line) * 4 > self._limit:  # else it cannot be over: 4 bytes a character at most
            self._check(len(line.encode()))
        if not line:  # a blank line dispatches the event, if a `data` line came
            if self._data:
                data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
                events.append(ServerSentEvent(self._event, data, self._last_id, self._retry))
                self._data = []
                self._data_bytes = 0
            self._event = ""
            self._retry = None
            return
        # `name: value`, `name:value`, or a bare `name` (empty value); a line
        # starting with a colon is a comment (an empty name, ignored). The two
        # lines of nearly every event are looked for first.
        if line.startswith("data: "):
            name, value = "data", line[6:]
        elif line.startswith("event: "):
            self._event = line[7:]
            return
        else:
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_bytes += len(value.encode()) + 1
            if self._data_bytes > self._limit + 1:
                raise EventTooLarge(self._limit)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            with suppress(ValueError):  # httpx-sse's rule: what `int` reads
                self._retry = int(value)


FAST = True  # pydantic's parser first, `loads` when it refuses (the module's docstring)


def _reads_escapes_right() -> bool:
    # pydantic-core 2.18 reads an escape past U+007F in ASCII text as its UTF-8 bytes
    # read as Latin-1: no fast path there.
    return bool(from_json('"\\u00e9\\u20ac"') == "\u00e9\u20ac")


FAST_PATH = FAST and _reads_escapes_right()


def _integer(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:  # past the interpreter's digit limit
        return Decimal(text)


def _real(text: str) -> float | Decimal:
    value = float(text)
    return Decimal(text) if isinf(value) else value


_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_real)


def loads(data: str | bytes) -> Any:
    """`json.loads(data)`, every number kept with its exact value."""
    if isinstance(data, str):
        return _DECODER.decode(data)
    return json.loads(data, parse_int=_integer, parse_float=_real)  # bytes: its encoding found


def holds_infinity(value: object) -> bool:
    """Whether a float at infinity is anywhere in `value` (nested in dicts and lists)."""
    kind = type(value)
    if kind is float:
        return isinf(value)  # type: ignore[arg-type]
    if kind is dict:
        value = value.values()  # type: ignore[attr-defined]
    elif kind is not list:
        return False
    for item in value:  # type: ignore[attr-defined]
        kind = type(item)
        if kind is float:
            if isinf(item):
                return True
        elif (kind is dict or kind is list) and holds_infinity(item):
            return True
    return False


def most_values(data: str | bytes) -> int:
    """At least as many as the JSON values `loads(data)` builds, counted without decoding.

    Every value but the first stands after a `[` (an array's first element), a `,`
    (any later element or member) or a `:` (a member's value); a member's key after
    a `{` or a `,`. So `1 + ` the count of `{`, `[`, `,` and `:` is never below the
    number of values; those inside strings only make it larger.
    """
    if isinstance(data, bytes):
        return 1 + data.count(b"{") + data.count(b"[") + data.count(b",") + data.count(b":")
    return 1 + data.count("{") + data.count("[") + data.count(",") + data.count(":")
