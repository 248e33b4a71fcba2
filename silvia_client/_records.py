"""What a `Turn`, a `Message` and a `Session` share (`Shared`): their notebook views, their
citations as flat records and a DataFrame, and their JSON documents (`to_json()`, pydantic's dump).

A record is a `dict` of `FIELDS` per row (the summary's, then the streamed); a document
holds each row's wire form (`Citation.model_validate(row)` reads it back), ASCII text
(docs/notebooks.md says what each holds); neither a `provider` unless `include_provider=True`.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from .citations._links import resolve_citation, web_origin
from .citations._targets import (
    INCLUDE_PROVIDER,
    AccountsTarget,
    AccountTarget,
    MarketDataTarget,
    asks_for_provider,
    final_targets,
)

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, SerializationInfo
    from pydantic_core import CoreSchema

    from .chat._turn import Turn
    from .sessions._history import Message, Session

# In reading order, so that a table at a notebook's width shows first what a person reads first.
FIELDS = (
    *("kind", "label", "title", "cited_text", "number"),  # what a row is
    *("source", "url", "ticker", "account_ids", "hrefs"),  # where it points
    *("final", "summary", "index", "offset"),  # the bookkeeping
    *("role", "created_at", "message_id", "session_id"),  # who said it, when: long ids last
)
PANDAS_EXTRA = "to_pandas() needs pandas: pip install 'silvia-client[pandas]'"
R = TypeVar("R")


def _pick(
    said: Shared, turn: Callable[..., R], message: Callable[..., R], session: Callable[..., R]
) -> Callable[..., R]:
    return {"turn": turn, "message": message, "session": session}[said._said]


def _records(said: Turn | Message, web_url: str, *about: str | None) -> list[dict[str, Any]]:
    """`said`'s records, `about` its role, time, message id and session id (`FIELDS`' last)."""
    from .display._sources import number_sources  # the views load when first needed

    inline, summary = said.inline_citations, said.citations
    numbers = number_sources([*inline, *summary])
    finals = final_targets(inline, summary)
    out: list[dict[str, Any]] = []
    for is_summary, rows in ((True, summary), (False, inline)):
        for index, row in enumerate(rows):
            target = row.target
            resolved = resolve_citation(row, web_url=web_url)
            url = getattr(target, "url", None)
            refs = target.accounts if isinstance(target, AccountsTarget) else ()
            if isinstance(target, AccountTarget):
                refs = (target.ref,)
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
                    "account_ids": tuple(ref.account_id for ref in refs),
                    "hrefs": tuple(link.href for link in resolved.links),
                    "final": target == finals[row.source],
                    "summary": is_summary,
                    "index": index,
                    "offset": None if is_summary else getattr(row, "offset", None),
                    **dict(zip(FIELDS[-4:], about, strict=True)),
                }
            )
    return out


def _turn_records(turn: Turn, web_url: str) -> list[dict[str, Any]]:
    # A turn is an assistant's answer, not yet a stored message: no id, no time.
    return _records(turn, web_url, "assistant", None, None, turn.session_id)


def _message_records(message: Message, web_url: str, session: str | None = None) -> list[Any]:
    # A message does not know its session: a session's records say it.
    return _records(message, web_url, message.role, message.created_at, message.id, session)


def _session_records(session: Session, web_url: str) -> list[dict[str, Any]]:
    return [r for m in session.messages for r in _message_records(m, web_url, session.id)]


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


def document(said: Turn | Message | Session, include_provider: bool = False) -> dict[str, Any]:
    """`said` as its JSON document: what `to_json()` writes."""
    return _pick(said, _turn_document, _message_document, _session_document)(said, include_provider)


def _rows(said: Turn | Message, include_provider: bool) -> dict[str, Any]:
    context = {INCLUDE_PROVIDER: include_provider}
    return {
        key: [row.model_dump(mode="json", context=context) for row in getattr(said, key)]
        for key in ("citations", "inline_citations")
    }


def _turn_document(turn: Turn, include_provider: bool) -> dict[str, Any]:
    error = turn.error
    return {
        "type": "turn",
        "session_id": turn.session_id,
        "request_id": turn.request_id,
        "complete": turn.complete,
        "text": turn.text,
        "error": None if error is None else {"message": error.message, "type": error.error_type},
        "timings": dataclasses.asdict(turn.timings),
        **_rows(turn, include_provider),
    }


def _message_document(message: Message, include_provider: bool) -> dict[str, Any]:
    return {
        "id": message.id,
        "role": message.role,
        "created_at": message.created_at,
        "text": message.text,
        **_rows(message, include_provider),
    }


def _session_document(session: Session, include_provider: bool) -> dict[str, Any]:
    return {
        "type": "session",
        "id": session.id,
        "request_id": session.request_id,
        "title": session.title,
        "messages": [_message_document(m, include_provider) for m in session.messages],
    }


def to_json(said: Turn | Session, include_provider: bool, indent: int | None) -> str:
    return json.dumps(document(said, include_provider), indent=indent)


class Shared:
    """What a `Turn`, a `Message` and a `Session` share: their views, tables and pydantic's dump."""

    __slots__ = ()
    _said: ClassVar[str]  # what each class is: "turn", "message" or "session"

    def _repr_html_(self) -> str:
        from .display import message_html, session_html, turn_html  # only notebooks need them

        return _pick(self, turn_html, message_html, session_html)(self)

    def _repr_markdown_(self) -> str:
        from .display import message_markdown, session_markdown, turn_markdown

        return _pick(self, turn_markdown, message_markdown, session_markdown)(self)

    def citation_records(self, *, web_url: str | None = None) -> list[dict[str, Any]]:
        """One flat dict per citation row (of each message of a session); never a `provider`."""
        records = _pick(self, _turn_records, _message_records, _session_records)
        return records(self, web_origin(web_url))

    def to_pandas(self, *, web_url: str | None = None) -> Any:
        """`citation_records()` as a `pandas.DataFrame` (the `pandas` extra; docs/notebooks.md
        lists its columns). A citation the server sent both ways is there twice, once as it
        streamed in and once as a `citations_summary` row (`summary` True); to count each once::

            frame = turn.to_pandas()  # or message.to_pandas(), session.to_pandas()
            frame[frame["summary"]].groupby("kind", dropna=False).size()
        """
        return frame(self.citation_records(web_url=web_url))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """pydantic's dump (so FastAPI's `-> Turn`): the document `to_json()` writes, no
        `provider` unless the dump's context asks for it by name; an instance only."""
        from pydantic import PlainSerializer, PlainValidator, WithJsonSchema  # for pydantic's users

        name = cls.__name__

        def check(value: object) -> object:
            if isinstance(value, cls):
                return value
            raise ValueError(f"expected a {name}")

        def dump(value: Any, info: SerializationInfo) -> dict[str, Any]:
            return document(value, asks_for_provider(info.context))

        shape = {"type": "object", "title": name, "description": f"{name}.to_json()"}
        return handler.generate_schema(
            Annotated[object, PlainValidator(check), PlainSerializer(dump), WithJsonSchema(shape)]
        )
