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
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from ._gc import gc_paused
from ._options import check_text
from ._wire import DEFAULT_WIRE, WireFormat
from .chat import SourceRegistry
from .citations import CitationTarget, RowError
from .errors import ConfigurationError

if TYPE_CHECKING:
    import httpx

    from ._client import AsyncSilviaClient, SilviaClient
    from ._responses import ResponseErrors
    from .citations import Citation, InlineCitation

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

    def _repr_html_(self) -> str:
        from .display import message_html  # imported here: only notebooks need it

        return message_html(self)

    def _repr_markdown_(self) -> str:
        from .display import message_markdown

        return message_markdown(self)


@dataclass(frozen=True, slots=True)
class Session:
    """A session's history. Messages that were not objects are reported in `message_errors`."""

    id: str
    title: str | None
    messages: tuple[Message, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    message_errors: tuple[RowError, ...] = ()

    def _repr_html_(self) -> str:
        from .display import session_html  # imported here: only notebooks need it

        return session_html(self)

    def _repr_markdown_(self) -> str:
        from .display import session_markdown

        return session_markdown(self)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _one_meaning_per_source(
    citations: tuple[Citation, ...], inline: tuple[InlineCitation, ...]
) -> tuple[tuple[Citation, ...], tuple[InlineCitation, ...]]:
    """A stored answer is one turn, so it is read as a live turn is: one target per source.

    The server stores inline citations as they streamed, each with the target its
    source had then (a later call may pool it, or leave it untyped). The rows of
    a source whose targets differ go through the same registry, in the same
    order (streamed, then the summary), as in `TurnBuilder`, so a reload agrees
    with the live `Turn`. Almost always every source has one target throughout,
    and nothing changes.
    """
    if not inline:
        return citations, inline
    rows = (*inline, *citations)
    first: dict[str, CitationTarget | None] = {}
    differing: set[str] = set()
    for row in rows:
        known = first.setdefault(row.source, row.target)
        if known is not row.target and known != row.target:
            differing.add(row.source)
    if not differing:
        return citations, inline
    registry = SourceRegistry()
    for row in rows:
        if row.source in differing:
            registry.observe(row.source, row.target)
    final = {source: registry.target_for(source) for source in differing}
    return _agreeing(citations, final), _agreeing(inline, final)


_RowT = TypeVar("_RowT", bound="Citation")


def _agreeing(
    rows: tuple[_RowT, ...], final: Mapping[str, CitationTarget | None]
) -> tuple[_RowT, ...]:
    """`rows`, each row of a source in `final` with that target (copied only if it differs)."""
    from .citations._rows import citation_with_target

    out: list[_RowT] | None = None
    for index, row in enumerate(rows):
        source = row.source
        if source in final and row.target != (target := final[source]):
            if out is None:
                out = list(rows)
            out[index] = citation_with_target(row, target)
    return rows if out is None else tuple(out)


def _message(data: dict[str, Any], wire: WireFormat) -> Message:
    # The rows come straight from `json.loads` (see `parse_session`).
    from .citations._rows import Citation, InlineCitation, load_json_citations

    citations = load_json_citations(data.get(wire.message_citations_key), Citation)
    inline = load_json_citations(data.get(wire.message_inline_citations_key), InlineCitation)
    modelled = _MESSAGE_FIELDS | {wire.message_citations_key, wire.message_inline_citations_key}
    summary, streamed = _one_meaning_per_source(citations.citations, inline.citations)
    return Message(
        id=_text_or_none(data.get("id")),
        role=_text_or_none(data.get("role")),
        content=data.get("content"),
        created_at=_text_or_none(data.get("created_at")),
        citations=summary,
        inline_citations=streamed,
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
    with gc_paused():  # a long session is many objects that all stay alive (see _gc.py)
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
    if session_id in (".", ".."):
        # URL parsers resolve these segments (".." would GET the parent path), escaped or not.
        raise ConfigurationError(f"session_id {session_id!r} cannot be a path segment")
    try:
        return wire.session_path + quote(session_id, safe="")
    except UnicodeEncodeError:
        raise ConfigurationError("session_id cannot be encoded as UTF-8") from None


def _session_from(
    response: httpx.Response, body: bytes, session_id: str, errors: ResponseErrors
) -> Session:
    try:
        return parse_session(json.loads(body), session_id, errors.wire)
    except (ValueError, RecursionError):
        raise errors.unexpected(response, body, "a session as JSON") from None


class Sessions:
    """`client.sessions`: a session's history (`get`), or its body as sent (`get_raw`).

    GETs are retried on connection errors, 408, 429 and 5xx, within the
    deadline. Every keyword after the id is per call: None means "the
    client's setting"; `math.inf` as `deadline` means none.
    """

    def __init__(self, client: SilviaClient) -> None:
        self._client = client

    def get(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> Session:
        """The session's history, its citations read as a live turn's are."""
        response, body = self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return _session_from(response, body, session_id, self._client._errors)

    def get_raw(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> bytes:
        """The session's body exactly as the server sent it (decompressed), for tools that
        judge the wire; `parse_session(json.loads(body), session_id)` reads it as `get` does."""
        _, body = self._fetch(session_id, extra_headers, timeout, deadline, max_response_bytes)
        return body

    def _fetch(
        self,
        session_id: str,
        extra_headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
        deadline: float | None,
        max_response_bytes: int | None,
    ) -> tuple[httpx.Response, bytes]:
        client = self._client
        check_text(session_id, "session_id")
        path = session_path(session_id, client.wire)
        call = client._call(
            "get",
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        return client._fetch(path, call)


class AsyncSessions:
    """The async twin of `Sessions`."""

    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    async def get(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> Session:
        """The session's history, its citations read as a live turn's are."""
        response, body = await self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return _session_from(response, body, session_id, self._client._errors)

    async def get_raw(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> bytes:
        """The session's body exactly as the server sent it (see `Sessions.get_raw`)."""
        _, body = await self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return body

    async def _fetch(
        self,
        session_id: str,
        extra_headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
        deadline: float | None,
        max_response_bytes: int | None,
    ) -> tuple[httpx.Response, bytes]:
        client = self._client
        check_text(session_id, "session_id")
        path = session_path(session_id, client.wire)
        call = client._call(
            "get",
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        return await client._fetch(path, call)
