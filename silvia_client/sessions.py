"""`client.sessions`: a session's history, with the same typed citations as a live turn.

Reading is lenient where the data is the user's and strict where it is the
server's contract: a malformed citation row is skipped and reported on its
message, a malformed target becomes None, and fields the SDK does not model are
kept in `extra`; but a body that is not a session at all is an
`UnexpectedResponseError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ._responses import unexpected_response
from ._wire import DEFAULT_WIRE, WireFormat
from .citations import Citation, InlineCitation, RowError, load_citations
from .errors import ConfigurationError

if TYPE_CHECKING:
    import httpx

    from ._client import AsyncSilviaClient, SilviaClient

__all__ = ["AsyncSessions", "Message", "Session", "Sessions", "parse_session"]

_MESSAGE_FIELDS = frozenset({"id", "role", "content", "created_at"})
_SESSION_FIELDS = frozenset({"id", "title"})


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a session. `extra` holds every field the SDK does not model."""

    id: str | None
    role: str | None
    content: Any = field(repr=False)
    created_at: str | None = None
    citations: tuple[Citation, ...] = ()
    inline_citations: tuple[InlineCitation, ...] = ()
    citation_errors: tuple[RowError, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        """The message's text: `content` itself, or its text blocks joined."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            return "".join(
                block["text"]
                for block in self.content
                if isinstance(block, dict) and isinstance(block.get("text"), str)
            )
        return ""


@dataclass(frozen=True, slots=True)
class Session:
    """A session's history. Messages that were not objects are reported in `message_errors`."""

    id: str
    title: str | None
    messages: tuple[Message, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    message_errors: tuple[RowError, ...] = ()


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _message(data: dict[str, Any], wire: WireFormat) -> Message:
    citations = load_citations(data.get(wire.message_citations_key), Citation)
    inline = load_citations(data.get(wire.message_inline_citations_key), InlineCitation)
    modelled = _MESSAGE_FIELDS | {wire.message_citations_key, wire.message_inline_citations_key}
    return Message(
        id=_text_or_none(data.get("id")),
        role=_text_or_none(data.get("role")),
        content=data.get("content"),
        created_at=_text_or_none(data.get("created_at")),
        citations=citations.citations,
        inline_citations=inline.citations,
        citation_errors=citations.errors + inline.errors,
        extra={key: value for key, value in data.items() if key not in modelled},
    )


def parse_session(body: object, session_id: str, wire: WireFormat = DEFAULT_WIRE) -> Session:
    """Read a session body (already JSON-decoded). Raises ValueError if it is not a session."""
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    rows = body.get(wire.messages_key)
    if not isinstance(rows, list):
        raise ValueError(f"the body has no {wire.messages_key!r} list")
    info = body.get(wire.session_key)
    info = info if isinstance(info, dict) else {}
    messages: list[Message] = []
    errors: list[RowError] = []
    for index, row in enumerate(rows):
        if isinstance(row, dict):
            messages.append(_message(row, wire))
        else:
            errors.append(RowError(index, f"expected an object, got {type(row).__name__}", row))
    return Session(
        id=_text_or_none(info.get("id")) or session_id,
        title=_text_or_none(info.get("title")),
        messages=tuple(messages),
        extra={key: value for key, value in info.items() if key not in _SESSION_FIELDS},
        message_errors=tuple(errors),
    )


def session_path(session_id: str, wire: WireFormat) -> str:
    if not session_id:
        raise ConfigurationError("session_id must not be empty")
    try:
        return wire.session_path + quote(session_id, safe="")
    except UnicodeEncodeError:
        raise ConfigurationError("session_id cannot be encoded as UTF-8") from None


def _session_from(
    response: httpx.Response, body: bytes, session_id: str, wire: WireFormat
) -> Session:
    try:
        return parse_session(json.loads(body), session_id, wire)
    except (ValueError, RecursionError):
        raise unexpected_response(response, body, wire, "a session as JSON") from None


class Sessions:
    def __init__(self, client: SilviaClient) -> None:
        self._client = client

    def get(self, session_id: str) -> Session:
        """The session's history. GETs are retried on connection errors, 408, 429 and 5xx."""
        wire = self._client.wire
        response, body = self._client._get_json_bytes(session_path(session_id, wire))
        return _session_from(response, body, session_id, wire)


class AsyncSessions:
    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    async def get(self, session_id: str) -> Session:
        """The session's history. GETs are retried on connection errors, 408, 429 and 5xx."""
        wire = self._client.wire
        response, body = await self._client._get_json_bytes(session_path(session_id, wire))
        return _session_from(response, body, session_id, wire)
