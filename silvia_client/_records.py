"""Citations as flat records, and as a DataFrame: what `citation_records()` and `to_pandas()` give.

`turn.citation_records()`, `message.citation_records()` and
`session.citation_records()` give one plain `dict` per citation row, every
row kept (the summary's and the streamed, typed or not), in `FIELDS`' order:

- `session_id`    the turn's session, or the session's id (None for a message alone)
- `message_id`, `role`, `created_at`  the message's as sent (a turn: None, "assistant", None)
- `summary`       True for a `citations_summary` row (`citations`), False for a
                  streamed one (`inline_citations`)
- `index`         the row's place in its list, from 0
- `number`        its source's number as the views number it (first cited, 1)
- `offset`        where it streamed in the answer (None: a summary row, or a reloaded one)
- `source`, `title`, `cited_text`     as sent
- `kind`          the target's kind, or None for an untyped (legacy) row
- `url`, `ticker` the target's, else None
- `account_ids`   the account ids it names, a tuple (empty for other kinds)
- `label`, `hrefs` what `resolve_citation(row, web_url=...)` gives: the label and the
                  links' hrefs (a tuple)
- `final`         whether this row carries the server's final word on its source
                  (`target_for(source)` equals its target)

A target's `provider` is never a field: it names a vendor, for routing only.

`frame(records)` builds the `pandas.DataFrame` (the `pandas` extra): `created_at`
as a UTC datetime (NaT where it is missing or not a time), `index`, `number` and
`offset` as nullable `Int64`, the text columns as pandas' string dtype, the
tuples as objects. Without pandas it raises an `ImportError` naming the extra.
The records themselves are plain values, so any other table library (polars,
pyarrow, the csv module) takes them as they are.

Read through protocols (`display/_protocols.py`, and the few more attributes
here): this module imports no model, so the models' methods can import it.
JSON documents are `_export.py`'s.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol

from .citations._final import final_targets
from .citations._links import resolve_citation, web_origin
from .citations._targets import (
    AccountsTarget,
    AccountTarget,
    CitationTarget,
    MarketDataTarget,
)
from .display._protocols import CitedRow, MessageLike, SessionLike, StreamedRow, TurnLike
from .display._sources import number_sources

__all__ = [
    "FIELDS",
    "PANDAS_EXTRA",
    "MessageRows",
    "SessionRows",
    "TurnRows",
    "frame",
    "message_records",
    "session_records",
    "turn_records",
]

FIELDS = (
    "session_id",
    "message_id",
    "role",
    "created_at",
    "summary",
    "index",
    "number",
    "offset",
    "source",
    "title",
    "cited_text",
    "kind",
    "url",
    "ticker",
    "account_ids",
    "label",
    "hrefs",
    "final",
)
_INTEGERS = ("index", "number", "offset")
_STRINGS = (
    "session_id",
    "message_id",
    "role",
    "source",
    "title",
    "cited_text",
    "kind",
    "url",
    "ticker",
    "label",
)
PANDAS_EXTRA = "to_pandas() needs pandas: pip install 'silvia-client[pandas]'"


class TurnRows(TurnLike, Protocol):
    """A turn (`Turn`), with the session it belongs to."""

    @property
    def session_id(self) -> str | None: ...


class MessageRows(MessageLike, Protocol):
    """A message (`Message`), with its id and when it was written."""

    @property
    def id(self) -> str | None: ...
    @property
    def created_at(self) -> str | None: ...


class SessionRows(SessionLike, Protocol):
    """A session (`Session`) whose messages have ids and times."""

    @property
    def messages(self) -> Sequence[MessageRows]: ...


def _account_ids(target: CitationTarget | None) -> tuple[str, ...]:
    if isinstance(target, AccountTarget):
        return (target.account_id,)
    if isinstance(target, AccountsTarget):
        return tuple(ref.account_id for ref in target.accounts)
    return ()


def _rows(
    inline: Sequence[StreamedRow],
    summary: Sequence[CitedRow],
    about: dict[str, Any],
    web_url: str,
) -> list[dict[str, Any]]:
    numbers = number_sources([*inline, *summary])
    finals = final_targets(inline, summary)
    out: list[dict[str, Any]] = []
    listed: list[tuple[bool, Sequence[CitedRow]]] = [(True, summary), (False, inline)]
    for is_summary, rows in listed:
        for index, row in enumerate(rows):
            target = row.target
            resolved = resolve_citation(row, web_url=web_url)
            url = getattr(target, "url", None)
            out.append(
                {
                    **about,
                    "summary": is_summary,
                    "index": index,
                    "number": numbers[row.source],
                    "offset": None if is_summary else getattr(row, "offset", None),
                    "source": row.source,
                    "title": row.title,
                    "cited_text": row.cited_text,
                    "kind": None if target is None else target.kind,
                    "url": url if isinstance(url, str) else None,
                    "ticker": target.ticker if isinstance(target, MarketDataTarget) else None,
                    "account_ids": _account_ids(target),
                    "label": resolved.label,
                    "hrefs": tuple(link.href for link in resolved.links),
                    "final": target == finals[row.source],
                }
            )
    return out


def turn_records(turn: TurnRows, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of `turn`: the summary's rows, then the streamed ones."""
    # A turn is an assistant's answer, not yet a stored message: no id, no time.
    about = {
        "session_id": turn.session_id,
        "message_id": None,
        "role": "assistant",
        "created_at": None,
    }
    return _rows(turn.inline_citations, turn.citations, about, web_origin(web_url))


def _message_rows(
    message: MessageRows, session_id: str | None, origin: str
) -> list[dict[str, Any]]:
    about = {
        "session_id": session_id,
        "message_id": message.id,
        "role": message.role,
        "created_at": message.created_at,
    }
    return _rows(message.inline_citations, message.citations, about, origin)


def message_records(message: MessageRows, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of `message` (`session_id` None: a message does not know it)."""
    return _message_rows(message, None, web_origin(web_url))


def session_records(session: SessionRows, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of every message of `session`, message by message."""
    origin = web_origin(web_url)
    out: list[dict[str, Any]] = []
    for message in session.messages:
        out.extend(_message_rows(message, session.id, origin))
    return out


def _pandas() -> Any:
    try:
        return importlib.import_module("pandas")
    except ImportError as error:
        raise ImportError(PANDAS_EXTRA, name="pandas") from error


def frame(records: Sequence[dict[str, Any]]) -> Any:
    """A `pandas.DataFrame` of `records`, one column per field of `FIELDS`, typed."""
    pd = _pandas()
    columns = {name: [record[name] for record in records] for name in FIELDS}
    data = pd.DataFrame(columns, columns=list(FIELDS))
    # A time that is missing or not a time is NaT: a table of the user's data never fails.
    data["created_at"] = pd.to_datetime(
        data["created_at"], utc=True, errors="coerce", format="ISO8601"
    )
    for name in _INTEGERS:
        data[name] = data[name].astype("Int64")
    for name in _STRINGS:
        data[name] = data[name].astype("string")
    data["summary"] = data["summary"].astype(bool)
    data["final"] = data["final"].astype(bool)
    return data
