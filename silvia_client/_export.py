"""A turn or a session as a JSON document to save and share: what `to_json()` gives.

`turn.to_json()` is one object::

    {"type": "turn", "session_id": ..., "request_id": ..., "complete": true, "text": "...",
     "error": null | {"message": ..., "type": ...},
     "timings": {"first_byte": s, "first_text": s, "done": s},
     "citations": [row, ...], "inline_citations": [row, ...]}

and `session.to_json()`::

    {"type": "session", "id": ..., "request_id": ..., "title": ...,
     "messages": [{"id", "role", "created_at", "text", "citations", "inline_citations"}, ...]}

Each row is its wire form (`model_dump(mode="json")`: `source`, `title`,
`cited_text`, the `target` as the server sent it, `offset` on a streamed row,
and any field the SDK does not model), so `Citation.model_validate(row)` reads
it back. `model_dump()` of a row is the wire form and keeps `provider`; here
every `provider` key in a row is left out unless `include_provider=True` (a
provider names a vendor, and a shared document is user-facing). Non-ASCII text
is written as `\\u` escapes, so the document is ASCII and any file takes it.
The models are read through protocols (`display/_protocols.py`), as in `_records.py`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .display._protocols import SessionData, TurnData, WireRow

__all__ = ["session_json", "turn_json"]


def _without_provider(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_provider(v) for k, v in value.items() if k != "provider"}
    if isinstance(value, list):
        return [_without_provider(item) for item in value]
    return value


def _rows(rows: Sequence[WireRow], include_provider: bool) -> list[Any]:
    dumped = [row.model_dump(mode="json") for row in rows]
    return dumped if include_provider else [_without_provider(row) for row in dumped]


def _error(error: object | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {"message": getattr(error, "message", None), "type": getattr(error, "error_type", None)}


def turn_json(turn: TurnData, *, include_provider: bool = False, indent: int | None = 2) -> str:
    """`turn` as a JSON document (the module's docstring draws it)."""
    timings = turn.timings
    document = {
        "type": "turn",
        "session_id": turn.session_id,
        "request_id": turn.request_id,
        "complete": turn.complete,
        "text": turn.text,
        "error": _error(turn.error),
        "timings": {
            "first_byte": timings.first_byte,
            "first_text": timings.first_text,
            "done": timings.done,
        },
        "citations": _rows(turn.citations, include_provider),
        "inline_citations": _rows(turn.inline_citations, include_provider),
    }
    return json.dumps(document, indent=indent)


def session_json(
    session: SessionData, *, include_provider: bool = False, indent: int | None = 2
) -> str:
    """`session` as a JSON document (the module's docstring draws it)."""
    document = {
        "type": "session",
        "id": session.id,
        "request_id": session.request_id,
        "title": session.title,
        "messages": [
            {
                "id": message.id,
                "role": message.role,
                "created_at": message.created_at,
                "text": message.text,
                "citations": _rows(message.citations, include_provider),
                "inline_citations": _rows(message.inline_citations, include_provider),
            }
            for message in session.messages
        ],
    }
    return json.dumps(document, indent=indent)
