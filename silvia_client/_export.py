"""A turn or a session as a JSON document to save and share: what `to_json()` gives.

docs/notebooks.md ("JSON to save and share") says what the documents hold. Each row
is its wire form (`model_dump(mode="json")`), so `Citation.model_validate(row)` reads
it back, less every `provider` unless `include_provider=True`. The text is ASCII
(`\\u` escapes). `pydantic_schema` makes pydantic (so FastAPI) dump a `Turn`,
`Message` or `Session` as its document. The models call this module: it names them
for types only.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from .citations._targets import INCLUDE_PROVIDER, asks_for_provider

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, SerializationInfo
    from pydantic_core import CoreSchema

    from .chat._turn import Turn
    from .citations._rows import Citation
    from .sessions._history import Message, Session


def _rows(rows: Sequence[Citation], include_provider: bool) -> list[Any]:
    context = {INCLUDE_PROVIDER: include_provider}
    return [row.model_dump(mode="json", context=context) for row in rows]


def _error(error: object | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {"message": getattr(error, "message", None), "type": getattr(error, "error_type", None)}


def turn_document(turn: Turn, include_provider: bool = False) -> dict[str, Any]:
    return {
        "type": "turn",
        "session_id": turn.session_id,
        "request_id": turn.request_id,
        "complete": turn.complete,
        "text": turn.text,
        "error": _error(turn.error),
        "timings": dataclasses.asdict(turn.timings),
        "citations": _rows(turn.citations, include_provider),
        "inline_citations": _rows(turn.inline_citations, include_provider),
    }


def message_document(message: Message, include_provider: bool = False) -> dict[str, Any]:
    """`message` as the object a session's document holds for it."""
    return {
        "id": message.id,
        "role": message.role,
        "created_at": message.created_at,
        "text": message.text,
        "citations": _rows(message.citations, include_provider),
        "inline_citations": _rows(message.inline_citations, include_provider),
    }


def session_document(session: Session, include_provider: bool = False) -> dict[str, Any]:
    return {
        "type": "session",
        "id": session.id,
        "request_id": session.request_id,
        "title": session.title,
        "messages": [message_document(m, include_provider) for m in session.messages],
    }


def turn_json(turn: Turn, *, include_provider: bool = False, indent: int | None = 2) -> str:
    return json.dumps(turn_document(turn, include_provider), indent=indent)


def session_json(
    session: Session, *, include_provider: bool = False, indent: int | None = 2
) -> str:
    return json.dumps(session_document(session, include_provider), indent=indent)


def pydantic_schema(
    cls: type[Any], handler: GetCoreSchemaHandler, document: Callable[[Any, bool], dict[str, Any]]
) -> CoreSchema:
    """How pydantic takes a `cls` (only an instance) and dumps it: as `document` gives it.

    The provider is left out unless the dump's context asks for it by name; the JSON
    schema says only that it is an object.
    """
    from pydantic import PlainSerializer, PlainValidator, WithJsonSchema  # for pydantic's users

    def check(value: object) -> object:
        if isinstance(value, cls):
            return value
        raise ValueError(f"expected a {cls.__name__}")

    def dump(value: Any, info: SerializationInfo) -> dict[str, Any]:
        return document(value, asks_for_provider(info.context))

    shape = {"type": "object", "title": cls.__name__, "description": f"{cls.__name__}.to_json()"}
    return handler.generate_schema(
        Annotated[object, PlainValidator(check), PlainSerializer(dump), WithJsonSchema(shape)]
    )
