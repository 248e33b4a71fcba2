"""The typed events of one chat turn, and the table that reads them off the wire.

Every SSE event becomes exactly one of these; nothing is dropped. A name the SDK does
not know becomes `UnknownEvent`; a known name whose data is not JSON, or not the
documented shape, `MalformedEvent`. Neither stops the stream. `type` is the SDK's own
name for an event (stable, for `match`), whatever the wire calls it.

`EventDecoder` holds the readers, one per event name. Its fast path reads with
pydantic's parser (a citation's rows in one `validate_json`); whatever that refuses,
or whose result holds an infinity, goes the plain way, whole, which so decides every
`MalformedEvent` and row error (`tests/test_fast_json.py` holds the two equal).

In `to_dict`, an unknown or malformed event's `data` stays a string, re-written without its
providers (left out when it is not JSON). Events are slotted dataclasses, not frozen ones:
a frozen one costs about three times as much to build.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic_core import from_json

from .._sse import FAST_PATH, holds_infinity, loads
from .._wire import WireFormat
from ..citations._targets import INCLUDE_PROVIDER, RowError, without_provider

if TYPE_CHECKING:
    from ..citations._rows import Citation, InlineCitation

__all__ = [
    "ChatEvent",
    "CitationEvent",
    "CitationsSummaryEvent",
    "DoneEvent",
    "ErrorEvent",
    "EventDecoder",
    "MalformedEvent",
    "MessageEvent",
    "RawEvent",
    "SessionEvent",
    "TextEvent",
    "UnknownEvent",
    "decode_event",
    "event_decoder",
]


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One SSE event as the server sent it: its name (`event:`) and its data, unread (and out
    of the repr: it may hold targets, and their providers)."""

    name: str
    data: str = field(repr=False)


def _raw_data(data: str, include_provider: bool) -> str | None:
    """An event's raw data: as sent, or without its `provider` members, or None if not JSON."""
    if include_provider:
        return data
    try:
        value = loads(data)
    except (ValueError, RecursionError):
        return None
    kept = without_provider(value)
    return data if kept == value else json.dumps(kept, default=str)


def _jsonable(value: object, include_provider: bool) -> object:
    if isinstance(value, tuple):
        return [_jsonable(item, include_provider) for item in value]
    if isinstance(value, RowError):
        raw = value.raw if include_provider else without_provider(value.raw)
        return {"index": value.index, "reason": value.reason, "raw": raw}
    dump = getattr(value, "model_dump", None)  # a citation row (pydantic)
    if dump is not None:
        return dump(mode="json", context={INCLUDE_PROVIDER: include_provider})
    # A raw value the server sent: every `provider` member left out unless asked.
    return value if include_provider else without_provider(value)


class _Event:
    """What every chat event has: its JSON form, for a relay."""

    __slots__ = ()
    type: ClassVar[str]

    def to_dict(self, *, include_provider: bool = False) -> dict[str, Any]:
        """A JSON-ready dict: `type`, then each field; no `provider` unless asked by name."""
        document: dict[str, Any] = {"type": self.type}
        for item in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            value = getattr(self, item.name)
            if item.name == "data" and isinstance(value, str):
                raw = _raw_data(value, include_provider)
                if raw is not None:
                    document["data"] = raw
            else:
                document[item.name] = _jsonable(value, include_provider)
        return document

    def to_json(self, *, include_provider: bool = False) -> str:
        """`to_dict()` as a JSON string (one line)."""
        return json.dumps(self.to_dict(include_provider=include_provider), default=str)


@dataclass(slots=True)
class SessionEvent(_Event):
    """The session this turn belongs to (first event of a turn)."""

    type: ClassVar[Literal["session"]] = "session"
    session_id: str


@dataclass(slots=True)
class TextEvent(_Event):
    """A piece of the answer text."""

    type: ClassVar[Literal["text"]] = "text"
    text: str


@dataclass(slots=True)
class CitationEvent(_Event):
    """A citation as it streamed in; its `offset` is the answer's length at that moment."""

    type: ClassVar[Literal["citation"]] = "citation"
    citation: InlineCitation


@dataclass(slots=True)
class CitationsSummaryEvent(_Event):
    """The turn's citations, final. Rows that could not be read are in `errors`."""

    type: ClassVar[Literal["citations_summary"]] = "citations_summary"
    citations: tuple[Citation, ...]
    errors: tuple[RowError, ...] = ()


@dataclass(slots=True)
class MessageEvent(_Event):
    """The model's final message, raw as the server sent it (it carries no targets)."""

    type: ClassVar[Literal["message"]] = "message"
    message: dict[str, Any] = field(repr=False)


@dataclass(slots=True)
class ErrorEvent(_Event):
    """The server reports that the turn failed."""

    type: ClassVar[Literal["error"]] = "error"
    message: str
    error_type: str | None = None
    body: object = field(default=None, repr=False)


@dataclass(slots=True)
class DoneEvent(_Event):
    """The turn is complete."""

    type: ClassVar[Literal["done"]] = "done"


@dataclass(slots=True)
class UnknownEvent(_Event):
    """An event this SDK does not know, kept with its raw name and data."""

    type: ClassVar[Literal["unknown"]] = "unknown"
    event: str
    data: str = field(repr=False)  # raw: it may hold targets, and their providers


@dataclass(slots=True)
class MalformedEvent(_Event):
    """A known event whose data could not be read; `data` is exactly what arrived."""

    type: ClassVar[Literal["malformed"]] = "malformed"
    event: str
    data: str = field(repr=False)
    reason: str


ChatEvent: TypeAlias = (
    SessionEvent
    | TextEvent
    | CitationEvent
    | CitationsSummaryEvent
    | MessageEvent
    | ErrorEvent
    | DoneEvent
    | UnknownEvent
    | MalformedEvent
)


class _Shape(Exception):
    """The data parsed as JSON but is not the documented shape."""


def _field(data: object, key: str, kind: type) -> Any:
    if not isinstance(data, dict):
        raise _Shape(f"expected an object, got {type(data).__name__}")
    value = data.get(key)
    if not isinstance(value, kind):
        raise _Shape(f"expected {key!r} to be {kind.__name__}")
    return value


def _citation(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    # The rows' module (pydantic models) loads with the first citation, not the package.
    from ..citations._rows import InlineCitation

    row = _field(data, wire.citation_key, dict)
    return CitationEvent(InlineCitation.model_validate({**row, "offset": offset}))


def _citations_summary(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    from ..citations._rows import Citation, load_citations

    loaded = load_citations(_field(data, wire.citations_key, list), Citation)
    return CitationsSummaryEvent(loaded.citations, loaded.errors)


def _message(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    if not isinstance(data, dict):
        raise _Shape(f"expected an object, got {type(data).__name__}")
    return MessageEvent(data)


def _error(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    error = data.get(wire.error_key) if isinstance(data, dict) else None
    if isinstance(error, str):
        return ErrorEvent(error, None, data)
    if isinstance(error, dict):
        message, kind = error.get("message"), error.get("type")
        return ErrorEvent(
            message if isinstance(message, str) else "the server reported an error",
            kind if isinstance(kind, str) else None,
            data,
        )
    raise _Shape(f"expected {wire.error_key!r} to be an object or a string")


# What the fast path leaves to the plain way: any refusal of pydantic's parser.
_REFUSED = (ValueError, LookupError, _Shape, RecursionError)
# Only the keys go to pydantic-core's string cache (shared by the process), never the text.
_KEYS_ONLY: ConfigDict = ConfigDict(cache_strings="keys")


@lru_cache(maxsize=1)
def _row_adapters() -> tuple[TypeAdapter[Any], TypeAdapter[Any], str]:
    # Built at the first citation, with the rows' module: an event's data is read as a dict
    # of rows (one, or a list), so any other member refuses; and the offset's context key.
    from ..citations._rows import STREAM_OFFSET, Citation, InlineCitation

    return (
        TypeAdapter(dict[str, InlineCitation], config=_KEYS_ONLY),
        TypeAdapter(dict[str, list[Citation]], config=_KEYS_ONLY),
        STREAM_OFFSET,
    )


class EventDecoder:
    """`decode_event` for one `WireFormat`: its table of readers, by event name, built once."""

    __slots__ = ("_readers", "_wire")

    def __init__(self, wire: WireFormat) -> None:
        names = wire.events
        self._wire = wire
        # A reader takes the decoded data, the wire format, the answer's length so far.
        self._readers: Mapping[str, Callable[[object, WireFormat, int], ChatEvent]] = {
            names.session: lambda data, w, _: SessionEvent(_field(data, w.session_id_key, str)),
            names.text: lambda data, w, _: TextEvent(_field(data, w.text_key, str)),
            names.citation: _citation,
            names.citations_summary: _citations_summary,
            names.message: _message,
            names.error: _error,
            names.done: lambda data, w, _: DoneEvent(),
        }

    def __call__(self, name: str, data: str, offset: int = 0) -> ChatEvent:
        """Read one SSE event. Never raises: bad data gives a `MalformedEvent`."""
        reader = self._readers.get(name)
        if FAST_PATH and reader is not None:
            wire, names = self._wire, self._wire.events
            try:  # the fast path, or on to the plain way, which says what is wrong
                if name == names.text:  # the most frequent event, read here
                    value = from_json(data, cache_strings="keys")
                    text = value.get(wire.text_key) if type(value) is dict else None
                    if isinstance(text, str):
                        return TextEvent(text)
                elif name == names.citation:
                    adapter, _, key = _row_adapters()
                    row = adapter.validate_json(data, context={key: offset})[wire.citation_key]
                    if not holds_infinity(row.model_extra):
                        return CitationEvent(row)
                elif name == names.citations_summary:
                    rows = _row_adapters()[1].validate_json(data)[wire.citations_key]
                    if not any(holds_infinity(row.model_extra) for row in rows):
                        return CitationsSummaryEvent(tuple(rows))
                else:
                    value = from_json(data, cache_strings="keys")
                    # A message or an error keeps the values: none may be an infinity.
                    if name not in (names.message, names.error) or not holds_infinity(value):
                        return reader(value, wire, offset)
            except _REFUSED:
                pass
        return self.plain(name, data, offset)

    def plain(self, name: str, data: str, offset: int = 0) -> ChatEvent:
        """`__call__` without the fast path: `_sse.loads`, then the event's reader."""
        reader = self._readers.get(name)
        if reader is None:
            return UnknownEvent(name, data)
        try:
            return reader(loads(data), self._wire, offset)
        except ValueError as error:  # JSON errors and pydantic's ValidationError alike
            if name == self._wire.events.done and not data.strip():
                return DoneEvent()  # `done` carries `{}`, but an empty data line means the same
            reason = "invalid citation" if isinstance(error, ValidationError) else "invalid JSON"
            return MalformedEvent(name, data, reason)
        except _Shape as error:
            return MalformedEvent(name, data, str(error))
        except RecursionError:
            return MalformedEvent(name, data, "nested too deeply")


@lru_cache(maxsize=8)
def event_decoder(wire: WireFormat) -> EventDecoder:
    """The `EventDecoder` of `wire` (one per wire format, shared)."""
    return EventDecoder(wire)


def decode_event(name: str, data: str, wire: WireFormat, offset: int = 0) -> ChatEvent:
    """Read one SSE event. Never raises: bad data gives a `MalformedEvent`."""
    return event_decoder(wire)(name, data, offset)
