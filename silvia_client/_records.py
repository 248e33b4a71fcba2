"""Citations as flat records, and as a DataFrame: what `citation_records()` and `to_pandas()` give.

One plain `dict` per row, every row kept (the summary's, then the streamed), with
the fields of `FIELDS`; docs/notebooks.md ("Citations as a table") says what each
holds. A target's `provider` is never a field. The models call this module: it
names them for types only.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .citations._final import final_targets
from .citations._links import resolve_citation, web_origin
from .citations._targets import AccountsTarget, AccountTarget, MarketDataTarget
from .display._sources import number_sources

if TYPE_CHECKING:
    from .chat._turn import Turn
    from .citations._rows import Citation
    from .sessions._history import Message, Session

# In reading order: what a row is, where it points, the bookkeeping; the long ids and the
# times last, so that a table at a notebook's width shows the columns a person reads first.
FIELDS = (
    "kind",
    "label",
    "title",
    "cited_text",
    "number",
    "source",
    "url",
    "ticker",
    "account_ids",
    "hrefs",
    "final",
    "summary",
    "index",
    "offset",
    "role",
    "created_at",
    "message_id",
    "session_id",
)
PANDAS_EXTRA = "to_pandas() needs pandas: pip install 'silvia-client[pandas]'"


def _rows(
    inline: Sequence[Citation], summary: Sequence[Citation], about: dict[str, Any], web_url: str
) -> list[dict[str, Any]]:
    numbers = number_sources([*inline, *summary])
    finals = final_targets(inline, summary)
    out: list[dict[str, Any]] = []
    for is_summary, rows in ((True, summary), (False, inline)):
        for index, row in enumerate(rows):
            target = row.target
            resolved = resolve_citation(row, web_url=web_url)
            url = getattr(target, "url", None)
            if isinstance(target, AccountTarget):
                account_ids: tuple[str, ...] = (target.account_id,)
            elif isinstance(target, AccountsTarget):
                account_ids = tuple(ref.account_id for ref in target.accounts)
            else:
                account_ids = ()
            out.append(
                {  # in the order of `FIELDS`
                    "kind": None if target is None else target.kind,
                    "label": resolved.label,
                    "title": row.title,
                    "cited_text": row.cited_text,
                    "number": numbers[row.source],
                    "source": row.source,
                    "url": url if isinstance(url, str) else None,
                    "ticker": target.ticker if isinstance(target, MarketDataTarget) else None,
                    "account_ids": account_ids,
                    "hrefs": tuple(link.href for link in resolved.links),
                    "final": target == finals[row.source],
                    "summary": is_summary,
                    "index": index,
                    "offset": None if is_summary else getattr(row, "offset", None),
                    **about,
                }
            )
    return out


def _message_rows(message: Message, session_id: str | None, web_url: str) -> list[dict[str, Any]]:
    about = {
        "role": message.role,
        "created_at": message.created_at,
        "message_id": message.id,
        "session_id": session_id,
    }
    return _rows(message.inline_citations, message.citations, about, web_url)


def turn_records(turn: Turn, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of `turn`: the summary's rows, then the streamed ones."""
    # A turn is an assistant's answer, not yet a stored message: no id, no time.
    about = {
        "role": "assistant",
        "created_at": None,
        "message_id": None,
        "session_id": turn.session_id,
    }
    return _rows(turn.inline_citations, turn.citations, about, web_origin(web_url))


def message_records(message: Message, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of `message` (`session_id` None: a message does not know it)."""
    return _message_rows(message, None, web_origin(web_url))


def session_records(session: Session, *, web_url: str | None = None) -> list[dict[str, Any]]:
    """One record per row of every message of `session`, message by message."""
    origin = web_origin(web_url)
    return [r for message in session.messages for r in _message_rows(message, session.id, origin)]


def frame(records: Sequence[dict[str, Any]]) -> Any:
    """A `pandas.DataFrame` of `records`, one typed column per field of `FIELDS`."""
    try:
        pd = importlib.import_module("pandas")
    except ImportError as error:
        raise ImportError(PANDAS_EXTRA, name="pandas") from error
    columns = {name: [record[name] for record in records] for name in FIELDS}
    data = pd.DataFrame(columns, columns=list(FIELDS))
    for name in FIELDS:
        if name == "created_at":  # a time missing or not a time is NaT: a table never fails
            data[name] = pd.to_datetime(data[name], utc=True, errors="coerce", format="ISO8601")
        elif name in ("index", "number", "offset"):
            data[name] = data[name].astype("Int64")
        elif name in ("summary", "final"):
            data[name] = data[name].astype(bool)
        elif name not in ("account_ids", "hrefs"):  # the tuples stay objects
            data[name] = data[name].astype("string")
    return data
