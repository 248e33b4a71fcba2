"""A session's history read off its body: `Session`, `Message`, `parse_session`, `read_session`.

Lenient where the data is the user's (a malformed row is skipped and reported on its
message, a malformed target is None, unmodelled fields are kept in `extra`), strict where
it is the server's contract: a body that is no session is an `UnexpectedResponseError`.
Rows are read as sent, so a reload shows what the live turn showed. `read_session` tries
the fast path first (`_sse.FAST_PATH`: one `validate_json`, `_body_adapter`), and the
plain way (`parse_session`) reads whatever that refuses and decides every error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from .._records import Shared, to_json
from .._sse import FAST_PATH, holds_infinity, loads, most_values
from .._wire import DEFAULT_WIRE, DEFAULTS, WireFormat
from ..chat._turn import text_preview
from ..citations import CitationRows, CitationTarget, RowError
from ..citations._targets import FinalTargets
from ..errors import ConfigurationError, ResponseTooLargeError

if TYPE_CHECKING:
    import httpx
    from pydantic import BaseModel, TypeAdapter

    from .._base import ResponseErrors
    from .._deadline import Call
    from ..citations import Citation, InlineCitation


_MESSAGE_FIELDS = frozenset({"id", "role", "content", "created_at"})
_SESSION_FIELDS = frozenset({"id", "title"})


@dataclass(frozen=True, slots=True)
class Message(FinalTargets, Shared):
    """One message of a session. `extra` holds every field the SDK does not model; rows that
    could not be read are in `citation_errors` and `inline_citation_errors`."""

    _said: ClassVar[str] = "message"
    id: str | None
    role: str | None
    content: Any
    created_at: str | None = None
    citations: tuple[Citation, ...] = ()
    inline_citations: tuple[InlineCitation, ...] = ()
    citation_errors: tuple[RowError, ...] = ()
    inline_citation_errors: tuple[RowError, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    _targets: dict[str, CitationTarget | None] = field(
        default_factory=dict, init=False, compare=False
    )

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

    def __repr__(self) -> str:
        # A preview of the text and how many rows: never a target (a provider would show).
        return (
            f"Message(id={self.id!r}, role={self.role!r}, created_at={self.created_at!r}, "
            f"text={text_preview(self.text)!r}, citations={len(self.citations)}, "
            f"inline_citations={len(self.inline_citations)})"
        )


@dataclass(frozen=True, slots=True)
class Session(Shared):
    """A session's history. Messages that were not objects are reported in `message_errors`."""

    _said: ClassVar[str] = "session"
    id: str
    title: str | None
    messages: tuple[Message, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    message_errors: tuple[RowError, ...] = ()
    # The response's x-request-id, the id to quote to support; not in the repr, where a
    # notebook's saved output would change with every run.
    request_id: str | None = field(default=None, repr=False, compare=False)

    def to_json(self, *, include_provider: bool = False, indent: int | None = 2) -> str:
        """The session as a JSON document: messages, their rows with targets (`_records.py`)."""
        return to_json(self, include_provider, indent)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _message(
    data: Mapping[str, Any],
    modelled: frozenset[str],
    citations: CitationRows[Citation],
    inline: CitationRows[InlineCitation],
) -> Message:
    return Message(
        id=_text_or_none(data.get("id")),
        role=_text_or_none(data.get("role")),
        content=data.get("content"),
        created_at=_text_or_none(data.get("created_at")),
        citations=citations.citations,
        inline_citations=inline.citations,
        citation_errors=citations.errors,
        inline_citation_errors=inline.errors,
        extra={key: value for key, value in data.items() if key not in modelled},
    )


def _session(
    info: object, session_id: str, messages: Sequence[Message], errors: Sequence[RowError] = ()
) -> Session:
    info = info if isinstance(info, dict) else {}
    return Session(
        id=_text_or_none(info.get("id")) or session_id,
        title=_text_or_none(info.get("title")),
        messages=tuple(messages),
        extra={key: value for key, value in info.items() if key not in _SESSION_FIELDS},
        message_errors=tuple(errors),
    )


def parse_session(body: object, session_id: str, wire: WireFormat = DEFAULT_WIRE) -> Session:
    """Read a session body (already JSON-decoded). Raises ValueError if it is not a session."""
    from ..citations._rows import Citation, InlineCitation, load_citations

    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    rows = body.get(wire.messages_key)
    if not isinstance(rows, list):
        raise ValueError(f"the body has no {wire.messages_key!r} list")
    messages: list[Message] = []
    errors: list[RowError] = []
    modelled = _MESSAGE_FIELDS | {wire.message_citations_key, wire.message_inline_citations_key}
    for index, row in enumerate(rows):
        if isinstance(row, dict):
            citations = load_citations(row.get(wire.message_citations_key), Citation)
            inline = load_citations(row.get(wire.message_inline_citations_key), InlineCitation)
            messages.append(_message(row, modelled, citations, inline))
        else:
            errors.append(RowError(index, f"expected an object, got {type(row).__name__}", row))
    return _session(body.get(wire.session_key), session_id, messages, errors)


def read_session(body: bytes, session_id: str, wire: WireFormat = DEFAULT_WIRE) -> Session:
    """`parse_session` of the body decoded as a live event is (`_sse.loads`: a number of
    any length keeps its row); ValueError (or RecursionError) if it cannot be."""
    if FAST_PATH:
        try:
            return _fast_session(body, session_id, wire)
        except (ValueError, LookupError, RecursionError):
            pass  # the plain way reads it, and says what is wrong with it
    return parse_session(loads(body), session_id, wire)


@lru_cache(maxsize=8)
def _body_adapter(wire: WireFormat) -> TypeAdapter[BaseModel]:
    """A body as the fast path reads it: its messages' rows typed, all else kept as sent."""
    from pydantic import ConfigDict, Field, TypeAdapter, create_model

    from ..citations._rows import Citation, InlineCitation

    # Only the keys go to pydantic-core's string cache (shared by the process).
    message = create_model(
        "FastMessage",
        __config__=ConfigDict(extra="allow", cache_strings="keys"),
        rows=(list[Citation] | None, Field(None, alias=wire.message_citations_key)),
        inline=(list[InlineCitation] | None, Field(None, alias=wire.message_inline_citations_key)),
    )
    body = create_model(
        "FastBody",
        __config__=ConfigDict(extra="ignore", cache_strings="keys"),
        messages=(list[message], Field(alias=wire.messages_key)),  # type: ignore[valid-type]
        info=(object, Field(None, alias=wire.session_key)),
    )
    return TypeAdapter(body)


def _fast_session(body: bytes, session_id: str, wire: WireFormat) -> Session:
    read: Any = _body_adapter(wire).validate_json(body)
    kept = [read.info, *(row.model_extra for row in read.messages)]
    kept += [cited.model_extra for row in read.messages for cited in row.rows or ()]
    kept += [cited.model_extra for row in read.messages for cited in row.inline or ()]
    if holds_infinity(kept):  # pydantic's infinity may be a number `loads` reads as a Decimal
        raise ValueError  # read the plain way
    messages = [
        _message(
            row.model_extra,
            _MESSAGE_FIELDS,
            CitationRows(tuple(row.rows or ())),
            CitationRows(tuple(row.inline or ())),
        )
        for row in read.messages
    ]
    return _session(read.info, session_id, messages)


def session_path(session_id: str, wire: WireFormat) -> str:
    """The path that GETs a session, its id escaped; ConfigurationError if it cannot be one."""
    if not session_id:
        raise ConfigurationError("session_id must not be empty")
    if session_id in (".", ".."):
        # URL parsers resolve these segments (".." would GET the parent path), escaped or not.
        raise ConfigurationError(f"session_id {session_id!r} cannot be a path segment")
    try:
        return wire.session_path + quote(session_id, safe="")
    except UnicodeEncodeError:
        raise ConfigurationError("session_id cannot be encoded as UTF-8") from None


def session_from(
    response: httpx.Response, body: bytes, session_id: str, errors: ResponseErrors, call: Call
) -> Session:
    """The session a GET's `body` holds, if at most `max_values` values: counted before decoding,
    where a body of tiny values grows 30 to 45 times. The error's `limit` is the byte limit."""
    if most_values(body) > call.options.max_values:
        raise ResponseTooLargeError(
            f"the body holds more than {call.options.max_values:,} JSON values, the most a body of "
            f"max_response_bytes may (max_response_bytes // {DEFAULTS.bytes_per_value})",
            limit=call.options.max_response_bytes,
            request_id=errors.request_id(response),
        )
    try:
        session = read_session(body, session_id, errors.wire)
    except (ValueError, RecursionError):
        raise errors.unexpected(response, body, "a session as JSON") from None
    return replace(session, request_id=errors.request_id(response))
