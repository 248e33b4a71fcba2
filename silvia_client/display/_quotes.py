"""What a quote looks like in a view: a `key: value` row read as pairs, a long quote folded.

A tool's SQL rows reach a citation's `cited_text` as lines of
`key: value, key: value`. `key_values` reads such a quote into its rows of
pairs, when every line holds two pairs or more (None for anything else: prose,
even "Note: a colon", is shown as prose). `fold` cuts a quote
to what a view shows at first, and says whether there is more. Nothing here
escapes: the views do (`_html.py`).
"""

from __future__ import annotations

import re

__all__ = ["FOLDED_CHARS", "FOLDED_ROWS", "fold", "key_values"]

FOLDED_CHARS = 200  # a quote longer than this folds after it
FOLDED_ROWS = 3  # a quote of more key/value rows than this folds after them

# A pair starts a line or follows ", ": a key of letters, digits, `_` and inner spaces.
_PAIR = re.compile(r"(?:^|, )([A-Za-z_][A-Za-z0-9_ ]{0,39}): ")


def _pairs(line: str) -> list[tuple[str, str]] | None:
    starts = list(_PAIR.finditer(line))
    if len(starts) < 2 or starts[0].start() != 0:
        return None
    out: list[tuple[str, str]] = []
    for here, after in zip(starts, [*starts[1:], None], strict=True):
        end = after.start() if after is not None else len(line)
        out.append((here.group(1), line[here.end() : end]))
    return out


def key_values(text: str | None) -> list[list[tuple[str, str]]] | None:
    """Each line of `text` as its (key, value) pairs, when every line is such pairs; else None."""
    if not text:
        return None
    rows: list[list[tuple[str, str]]] = []
    for line in text.strip().splitlines():
        if not line.strip():
            continue
        pairs = _pairs(line.strip())
        if pairs is None:
            return None
        rows.append(pairs)
    return rows or None


def fold(text: str) -> tuple[str, bool]:
    """`text` on one line, cut to `FOLDED_CHARS` (with "…"), and whether it was cut."""
    text = " ".join(text.split())
    if len(text) <= FOLDED_CHARS:
        return text, False
    return text[: FOLDED_CHARS - 1] + "…", True
