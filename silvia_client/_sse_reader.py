"""The one loop that reads a `text/event-stream` body: the WHATWG rules, with a size limit.

The parser follows the WHATWG HTML standard's "event stream interpretation"
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
where httpx-sse's `EventSource` departs from it in ways a client reading a
long chat stream notices:

* the body is always UTF-8 (invalid bytes replaced), whatever charset the
  Content-Type header names; `EventSource` decodes with `iter_text()`;
* one leading byte-order mark is dropped; `EventSource` keeps it, stuck to the
  first field name (`"\\ufeffevent"`), so the first event loses its type;
* a blank line dispatches an event only if at least one `data` line came
  since the last dispatch; `EventSource` also dispatches whenever `event`,
  `retry` or a once-set `id` is pending, so after any `id:` every keep-alive
  comment followed by a blank line becomes a phantom event;
* an `id` holding NUL is ignored; `retry` is kept when `int` reads it (as
  httpx-sse does), per event, while the last `id` stays for later events;
* an event not ended by a blank line at end of stream is dropped.

Where things are: `read_events` is the one loop. Per chunk of bytes it
decodes, makes every line end an LF (CR, LF or CRLF; a CR ends its line at
once, and an LF right after it, maybe at the start of the next chunk, is
skipped), and reads the events the chunk ends, handing them over in one list.
A run of canonical events (`event: NAME`, `data: DATA`, a blank line; comments
and blank lines between; what a plain server writes) is read by two regular
expressions (`_sse_runs.py`), one that finds where the run ends and one that
reads its events; the rest goes to the field loop, which reads every
line the spec allows and checks the size limit. `_sse.py` drives it, for
whole bodies and chunk by chunk. On a stream of small chat events, the
per-line and per-event costs are most of the parsing, hence its shape.

The size limit (`max_event_bytes`, None for none) is counted in bytes of the
text as UTF-8. A line longer than the limit raises `EventTooLarge` as soon as
that much of it has arrived, before its end does; so does an event whose data
(its `data` lines joined by LF) grows past it. A line includes its field name,
so a one-line event's data can be at most the limit less `len("data: ")`. What
the parser holds stays within the limit plus one chunk.
"""

from __future__ import annotations

import re
import sys
from codecs import BOM_UTF8, utf_8_decode
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeAlias, overload

from ._sse_runs import PLAIN, canonical_run

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable

__all__ = ["EventTooLarge", "QuickFields", "SSEFields", "event_limit", "read_events"]

SSEFields: TypeAlias = "tuple[str, str, str, int | None]"
"""One event: its type (`"message"` when none was given), data, last event id, retry."""

QuickFields: TypeAlias = "tuple[str, str, str]"
"""One event of `iter_sse_batches`: `("", type, data)`, or `(what a shortcut read, "", "")`."""


class EventTooLarge(Exception):
    """An event-stream line, or an event's data, passed the reader's `max_event_bytes`.

    `limit` is that limit. The message gives it and nothing of the data.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"event stream line or event data over the limit of {limit} bytes")
        self.limit = limit


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


def event_limit(max_event_bytes: int | None) -> int:
    if max_event_bytes is None:
        return sys.maxsize
    if max_event_bytes < 0:
        raise ValueError("max_event_bytes must be None or at least 0")
    return max_event_bytes


_HELD_MAX = 64 * 1024  # the longest rest of a chunk held for the next one (characters)
# A long text (a body read whole) is read a window of this many characters at a
# time: what the expressions hold, and each list of events, stays bounded.
_RUN_WINDOW = 64 * 1024


@overload
def read_events(
    limit: int, chunks: Iterable[bytes], quick: re.Pattern[str] | None = None
) -> Generator[list[Any], None, None]: ...
@overload
def read_events(
    limit: int, chunks: Iterable[bytes | None], quick: re.Pattern[str] | None = None
) -> Generator[list[Any] | None, None, None]: ...
def read_events(
    limit: int, chunks: Iterable[bytes | None], quick: re.Pattern[str] | None = None
) -> Generator[list[Any] | None, None, None]:
    """The one loop: the events of the body given as `chunks`, a list per chunk that ends any.

    Each event is an `SSEFields` tuple; with `quick` (see `quick_pattern`), a
    tuple of three, `("", name, data)` or what `quick`'s shortcut read.

    A chunk of None (only `_sse._Inbox` gives one) means there is no input yet: the
    reader yields None and waits to be resumed. That is how `SSEParser` and
    `aiter_sse_fields` feed it, chunk by chunk; `iter_sse_fields` hands it the
    body's own chunks. So the parser's state lives in this frame's local
    variables between chunks, which Python reads and writes much faster than
    attributes.

    Per chunk, with nothing of an event pending, the canonical run at the start
    of the text (with the line the last chunk left unended) is read by two
    regular expressions (`_sse_runs.py`): one that finds where it ends
    (`canonical_run`), and one that reads its events (`quick`, or `PLAIN`).
    What follows it, if no event ends in it (a line or an event cut by the
    chunk's end), waits for the next chunk, to be read with it; anything else
    goes to the line loop, which reads everything the spec allows. A run is
    read as the line loop would read it: its lines are of the forms the loop
    reads first, each within the limit.

    Raises `EventTooLarge` at the first line or event over `limit`, after
    yielding the events before it.
    """
    # Text of at most this many characters is at most `limit` bytes in UTF-8
    # (4 bytes a character at most): no line in it needs measuring.
    short = limit // 4
    canonical = canonical_run(short)
    held_max = min(short, _HELD_MAX)
    # Bytes not decoded yet: the start of a UTF-8 character cut by the chunk,
    # or, before the first three bytes are in, what may be a byte-order mark.
    pending = b""
    at_start = True
    # Whether the last text ended with a CR, whose line has ended: an LF
    # starting the next text is the rest of that CRLF, not a blank line.
    after_cr = False
    # The line not ended yet, in pieces (one a chunk), and its size.
    partial: list[str] = []
    partial_bytes = 0
    # What followed the last canonical run, held back unread (no event ended in
    # it); only ever with nothing of an event pending, and no `partial`.
    held = ""
    # The event being read: its type; its data lines (an event is dispatched
    # only if it has one), how many of them were counted at the end of a chunk
    # and their size (each line plus one for the LF joining it); the last id
    # (it stays for later events); and the retry (per event).
    event = last_id = ""
    data: list[str] = []
    counted = data_bytes = 0
    retry: int | None = None
    for chunk in chunks:
        if chunk is None:
            yield None
            continue

        # Bytes to text: always UTF-8, invalid bytes replaced, one leading BOM
        # dropped (what the stdlib's incremental "utf-8-sig" decoder does,
        # without its two Python calls per chunk).
        if pending:
            chunk = pending + chunk
        if at_start:
            if len(chunk) < 3 and BOM_UTF8.startswith(chunk):
                pending = chunk  # too short to tell a BOM yet
                continue
            at_start = False
            if chunk.startswith(BOM_UTF8):
                chunk = chunk[3:]
        try:
            # A chunk of whole, valid UTF-8 (nearly all of them) decodes the same
            # either way; `bytes.decode` is just the quicker call.
            text = chunk.decode()
            pending = b""
        except UnicodeDecodeError:
            text, used = utf_8_decode(chunk, "replace", False)
            pending = chunk[used:]
        if not text:
            continue

        # Line ends to LF, as the WHATWG algorithm reads them: a CR ends a line at
        # once, and an LF right after a CR is skipped, so a CRLF cut between two
        # chunks is one line end, and a last lone CR ends its line.
        if after_cr:
            after_cr = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    continue
        if "\r" in text:
            after_cr = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")

        # A canonical run, when nothing of an event is pending: at the start of the
        # text held back from the last chunk, or of the line it left unended (if
        # that is short: it is read again, with this text).
        batch: list[Any] = []
        if (
            canonical is not None
            and not data
            and not event
            and retry is None
            and (not partial or partial_bytes <= held_max)
        ):
            if held:
                text = held + text
                held = ""
            elif partial:
                partial.append(text)
                text = "".join(partial)
                partial = []
                partial_bytes = 0
            end = 0
            while True:
                window = end + _RUN_WINDOW
                stop = canonical.match(text, end, window).end()  # type: ignore[union-attr]
                if stop == end:
                    break
                if batch:
                    yield batch  # the last window's
                if quick is None:
                    batch = [
                        (name, value, last_id, None)
                        for name, value in PLAIN.findall(text, end, stop)
                    ]
                else:
                    batch = quick.findall(text, end, stop)
                end = stop
                if window >= len(text):
                    break  # the run ended in the text, not at the window's end
            if end:
                text = text[end:]
            if len(text) <= held_max and "\n\n" not in text:
                # No event ends in the rest (an event cut by the chunk's end, say):
                # it is held back, to be read with the next chunk.
                held = text
                if batch:
                    yield batch
                continue

        # Text to lines.
        lines = text.split("\n")
        tail = lines.pop()  # the start of a line not ended yet, or ""

        # The limit, on lines; the first may continue the last chunk's line.
        too_large = False
        if partial:
            if not lines:
                partial.append(tail)
                partial_bytes += _utf8_len(tail)
                if partial_bytes > limit:
                    raise EventTooLarge(limit)
                continue
            if partial_bytes + _utf8_len(lines[0]) > limit:
                lines.clear()
                too_large = True
            else:
                partial.append(lines[0])
                lines[0] = "".join(partial)
            partial = []
            partial_bytes = 0
        if len(text) > short and not too_large:
            for index, line in enumerate(lines):
                if _utf8_len(line) > limit:
                    del lines[index:]  # the events before it still count
                    too_large = True
                    break

        # Lines to events.
        for line in lines:
            if not line:
                # A blank line dispatches the event, if a `data` line came.
                if data:
                    if len(data) == 1:
                        value = data[0]  # within the limit: a line, or counted already
                    else:
                        value = "\n".join(data)
                        if len(value) > short and _utf8_len(value) > limit:
                            if batch:
                                yield batch
                            raise EventTooLarge(limit)
                    name = event or "message"
                    batch.append(
                        (name, value, last_id, retry) if quick is None else ("", name, value)
                    )
                    data = []
                    counted = data_bytes = 0
                event = ""
                retry = None
            elif line.startswith("data: "):  # the two lines of nearly every event
                data.append(line[6:])
            elif line.startswith("event: "):
                event = line[7:]
            else:
                # `name: value`, `name:value`, or a bare `name` (empty value); a
                # line starting with a colon is a comment (empty name, ignored).
                name, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
                elif name == "id":
                    if "\0" not in value:
                        last_id = value
                elif name == "retry":
                    with suppress(ValueError):  # httpx-sse's rule: what `int` reads
                        retry = int(value)
        if batch:
            yield batch

        # The limit, on the event still open: its data lines from this chunk
        # are counted now, those from earlier chunks already were.
        if data:
            for value in data[counted:]:
                data_bytes += _utf8_len(value) + 1
            if data_bytes - 1 > limit:
                raise EventTooLarge(limit)
            if len(data) - counted > 1:
                # Joined now, one string a chunk: a string object for each of
                # many short lines would hold many times the limit.
                data[counted:] = ["\n".join(data[counted:])]
            counted = len(data)
        if too_large:
            raise EventTooLarge(limit)
        if tail:
            partial = [tail]
            partial_bytes = _utf8_len(tail)
            if partial_bytes > limit:
                raise EventTooLarge(limit)
