"""Turns and sessions built from events and wire rows, as the client builds them."""

from __future__ import annotations

from typing import Any

from silvia_client.chat import Turn, TurnBuilder
from silvia_client.chat.events import (
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    SessionEvent,
    TextEvent,
)
from silvia_client.citations import Citation, InlineCitation
from silvia_client.sessions import Session, parse_session

ACCOUNT_A = "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"
ACCOUNT_B = "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"


def row(source: str, title: str | None = None, target: Any = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source, "title": title, **extra}
    if target is not None:
        out["target"] = target
    return out


def account(account_id: str = ACCOUNT_A, provider: str | None = "plaid") -> dict[str, Any]:
    return {"kind": "account", "accountId": account_id, "provider": provider}


def accounts(*ids: str, provider: str | None = "plaid") -> dict[str, Any]:
    return {"kind": "accounts", "accounts": [{"accountId": i, "provider": provider} for i in ids]}


def web(url: str) -> dict[str, Any]:
    return {"kind": "web", "url": url}


def build_turn(
    *items: str | dict[str, Any],
    summary: list[dict[str, Any]] | None = None,
    done: bool = True,
    error: str | None = None,
) -> Turn:
    """Text pieces and citation rows in stream order; each citation at the text's length then.

    `summary` defaults to the streamed rows, each once, as a server sends them.
    """
    builder = TurnBuilder()
    builder.apply(SessionEvent("s1"))
    streamed: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            builder.apply(TextEvent(item))
        else:
            streamed.append(item)
            citation = InlineCitation.model_validate({**item, "offset": builder.text_length})
            builder.apply(CitationEvent(citation))
    if summary is None:
        summary = list({repr(sorted(r.items())): r for r in streamed}.values())
    builder.apply(CitationsSummaryEvent(tuple(Citation.model_validate(r) for r in summary)))
    if error is not None:
        builder.apply(ErrorEvent(error, "api_error"))
    if done:
        builder.apply(DoneEvent())
    return builder.build()


def build_session(
    messages: list[dict[str, Any]], *, title: str | None = "A session", session_id: str = "s1"
) -> Session:
    body = {"session": {"id": session_id, "title": title}, "messages": messages}
    return parse_session(body, session_id)
