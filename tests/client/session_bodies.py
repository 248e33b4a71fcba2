"""Session bodies as `GET /api/chat/sessions/{id}` answers, built by hand for the session tests."""

from __future__ import annotations

from typing import Any

PATH = "/api/chat/sessions/sess_1"


def cite(source: str, target: object = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source, "title": "T:" + source, "cited_text": "q"}
    if target is not None:
        out["target"] = target
    return {**out, **extra}


def body(*messages: dict[str, Any], **session_fields: Any) -> dict[str, Any]:
    return {
        "session": {"id": "sess_1", "title": "Checking", **session_fields},
        "messages": list(messages),
    }


def user(text: str = "How much is in checking?") -> dict[str, Any]:
    return {"id": "m1", "role": "user", "content": text, "created_at": "2025-01-01T00:00:00Z"}


def assistant(**fields: Any) -> dict[str, Any]:
    return {
        "id": "m2",
        "role": "assistant",
        "content": [{"type": "text", "text": "You have "}, {"type": "text", "text": "$120."}],
        "created_at": "2025-01-01T00:00:05Z",
        **fields,
    }
