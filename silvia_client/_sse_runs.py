"""Runs of canonical SSE lines, read by regular expressions: what a plain server writes.

A canonical event is one `event` line (a name, not empty) and one `data` line,
then a blank line; between events, comment lines and blank lines. Line ends are
LF: the reader (`_sse_reader.read_events`) has made every CR and CRLF an LF before it
looks. Such a run reads, under the WHATWG rules, as the field loop of `_sse.py`
would read it line by line: each event has the name and the data of its two
lines, the last id and no retry; comments and blank lines change nothing.

Where things are: `canonical_run(short)`, the pattern of a run at the start of
a text, none of its lines over the size limit; `quick_pattern`, the pattern that
reads the events of a run, with a caller's shortcut for some (the chat stream's
text events); `PLAIN`, the events of a run as `(name, data)`.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

__all__ = ["PLAIN", "canonical_run", "quick_pattern"]

_REPEAT_MAX = 2**31 - 1  # any longer line is not in a run: the field loop reads it
# Possessive (never backtracking, so holding nothing per event matched) where the
# `re` module knows it (3.11); a run is the same either way.
_RUN_REPEAT = "*+" if sys.version_info >= (3, 11) else "*"


@lru_cache(maxsize=16)
def canonical_run(short: int) -> re.Pattern[str] | None:
    """A pattern matching the canonical lines at the start of a text, none over the limit.

    `short` is the length in characters under which a line cannot be over the
    limit (`_sse_reader.read_events`), so a line of the run needs no measuring. None when
    even `event: x` could be over it.
    """
    if short < len("event: x"):
        return None

    def line(start: str, least: int = 0) -> str:
        # `start`, then up to the rest of `short` characters of anything but LF.
        most = min(short - len(start), _REPEAT_MAX)
        return f"{start}[^\n]{{{least},{most}}}\n"

    event = line("event: ", 1) + line("data: ") + "\n"
    return re.compile("(?:" + event + "|" + line(":") + "|\n)" + _RUN_REPEAT)


def quick_pattern(shortcut: str | None = None) -> re.Pattern[str]:
    """A pattern for `iter_sse_batches`: each event of a canonical run as a 3-tuple.

    An event is `("", name, data)`; with `shortcut`, a regular expression with one
    group that matches some whole canonical events (`event: NAME\ndata: DATA\n\n`
    and nothing more), an event it matches is `(its group, "", "")`. The name of
    an event is never empty, so `name` says which it is.
    """
    general = "event: ([^\n]+)\ndata: ([^\n]*)\n\n"
    if shortcut is None:
        return re.compile("()" + general)
    pattern = re.compile(shortcut + "|" + general)
    if pattern.groups != 3:
        raise ValueError("a shortcut has exactly one group")
    return pattern


PLAIN = re.compile("event: ([^\n]+)\ndata: ([^\n]*)\n\n")
"""The events of a run, as `(name, data)`."""
