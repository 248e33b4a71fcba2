"""The typed events of one chat turn, and the table that reads them off the wire.

Every SSE event becomes exactly one of these; nothing is dropped. A name the
SDK does not know becomes `UnknownEvent` (raw name and data); a known name
whose data is not JSON, or not the documented shape, `MalformedEvent` (raw
data). Neither stops the stream. `type` is the SDK's own name for an event
(stable, for `match`), whatever the wire calls it (`_wire.EventNames`).

Where things are: the event classes; `ChatEvent`, their union; the readers,
one per event name, in one table (`EventDecoder`). The stream
(`_async/_stream.py`) reads each event once and applies it to the turn
(`chat/_turn.py`).

The fast path (`_sse.FAST_PATH`, CONTRIBUTING's "Fast paths"): `EventDecoder` first
reads an event with pydantic's parser, `from_json` and then the same reader, or,
for `citation` and `citations_summary`, one `validate_json` that builds the rows
from the event's JSON (a streamed row's offset in the validation context,
`STREAM_OFFSET`). Whatever that refuses, or whose result holds an infinity
(`_sse.holds_infinity`), goes the plain way, `_sse.loads` and the reader: the
whole event, so the plain way decides every `MalformedEvent` and every row error.
`tests/test_fast_json.py` holds the two ways equal.

`to_dict` and `to_json` (on `_Event`, the classes' one base) give an event as
JSON for a relay: a `type` key, then each field; citations in their wire form,
and every raw value (an unknown or malformed event's data, an error's body, a
message, a row error's raw row) with no `provider` member unless asked
(`_raw`). The data of an unknown or malformed event stays a string: as sent,
or, when it held a `provider`, re-written without it, and left out when it is
not JSON and the provider is not asked for.

Events are slotted dataclasses, not frozen ones: one is made per SSE event,
and a frozen one costs about three times as much to build. The turn never
reads an event after applying it.
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
    """One SSE event as the server sent it: its name (`event:`) and its data, unread.

    The data may hold citation targets, and their providers: it is kept out of
    the repr.
    """

    name: str
    data: str = field(repr=False)


def _raw(value: object, include_provider: bool) -> object:
    """A raw value the server sent, as JSON: every `provider` member left out unless asked."""
    return value if include_provider else without_provider(value)


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
        raw = _raw(value.raw, include_provider)
        return {"index": value.index, "reason": value.reason, "raw": raw}
    dump = getattr(value, "model_dump", None)  # a citation row (pydantic)
    if dump is not None:
        return dump(mode="json", context={INCLUDE_PROVIDER: include_provider})
    return _raw(value, include_provider)


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


# A reader takes the decoded data, the wire format, and the answer's length so
# far (a streamed citation's offset), and returns the event.
Reader: TypeAlias = Callable[[object, WireFormat, int], ChatEvent]


def _session(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    return SessionEvent(_field(data, wire.session_id_key, str))


def _text(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    return TextEvent(_field(data, wire.text_key, str))


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


def _done(data: object, wire: WireFormat, offset: int) -> ChatEvent:
    return DoneEvent()


class _Refused(ValueError):
    """The fast path's result may differ from the plain one's: read it the plain way."""


# A fast reader takes the data and the offset, and raises (ValueError, LookupError,
# _Shape, RecursionError) for anything it leaves to the plain way.
FastReader: TypeAlias = Callable[[str, int], ChatEvent]
_REFUSED = (ValueError, LookupError, _Shape, RecursionError)
# Only the keys go to pydantic-core's string cache (shared by the process), never the text.
_KEYS_ONLY: ConfigDict = ConfigDict(cache_strings="keys")


def _parsed(reader: Reader, wire: WireFormat, keeps_values: bool) -> FastReader:
    """`reader` of the data as `from_json` reads it; refused if kept values hold an infinity."""

    def read(data: str, offset: int) -> ChatEvent:
        value = from_json(data, cache_strings="keys")
        if keeps_values and holds_infinity(value):
            raise _Refused
        return reader(value, wire, offset)

    return read


@lru_cache(maxsize=1)
def _row_adapters() -> tuple[TypeAdapter[Any], TypeAdapter[Any], str]:
    # Built at the first citation, as the rows' module is loaded: an event's data is
    # read as a dict of rows (one row, or one list), so any other member refuses. With
    # them, the validation context's key for a streamed row's offset.
    from ..citations._rows import STREAM_OFFSET, Citation, InlineCitation

    return (
        TypeAdapter(dict[str, InlineCitation], config=_KEYS_ONLY),
        TypeAdapter(dict[str, list[Citation]], config=_KEYS_ONLY),
        STREAM_OFFSET,
    )


def _fast_text(key: str) -> FastReader:
    """`_text` of the data as `from_json` reads it, in one function: the most frequent event."""

    def read(data: str, offset: int) -> ChatEvent:
        value = from_json(data, cache_strings="keys")
        text = value.get(key) if type(value) is dict else None
        if isinstance(text, str):
            return TextEvent(text)
        raise _Refused

    return read


class EventDecoder:
    """`decode_event` for one `WireFormat`: its table of readers, by event name, built once."""

    __slots__ = ("_done", "_fast", "_readers", "_wire")

    def __init__(self, wire: WireFormat) -> None:
        names = wire.events
        self._wire = wire
        self._done = names.done
        self._readers: Mapping[str, Reader] = {
            names.session: _session,
            names.text: _text,
            names.citation: _citation,
            names.citations_summary: _citations_summary,
            names.message: _message,
            names.error: _error,
            names.done: _done,
        }
        self._fast: Mapping[str, FastReader] = (
            {
                names.session: _parsed(_session, wire, keeps_values=False),
                names.text: _fast_text(wire.text_key),
                names.citation: self._fast_citation,
                names.citations_summary: self._fast_summary,
                names.message: _parsed(_message, wire, keeps_values=True),
                names.error: _parsed(_error, wire, keeps_values=True),
                names.done: _parsed(_done, wire, keeps_values=False),
            }
            if FAST_PATH
            else {}
        )

    def __call__(self, name: str, data: str, offset: int = 0) -> ChatEvent:
        """Read one SSE event. Never raises: bad data gives a `MalformedEvent`."""
        fast = self._fast.get(name)
        if fast is not None:
            try:
                return fast(data, offset)
            except _REFUSED:
                pass  # the plain way reads it, and says what is wrong with it
        return self.plain(name, data, offset)

    def plain(self, name: str, data: str, offset: int = 0) -> ChatEvent:
        """`__call__` without the fast path: `_sse.loads`, then the event's reader."""
        reader = self._readers.get(name)
        if reader is None:
            return UnknownEvent(name, data)
        try:
            return reader(loads(data), self._wire, offset)
        except ValueError as error:  # JSON errors and pydantic's ValidationError alike
            if name == self._done and not data.strip():
                return DoneEvent()  # `done` carries `{}`, but an empty data line means the same
            reason = "invalid citation" if isinstance(error, ValidationError) else "invalid JSON"
            return MalformedEvent(name, data, reason)
        except _Shape as error:
            return MalformedEvent(name, data, str(error))
        except RecursionError:
            return MalformedEvent(name, data, "nested too deeply")

    def _fast_citation(self, data: str, offset: int) -> ChatEvent:
        adapter, _, key = _row_adapters()
        row = adapter.validate_json(data, context={key: offset})[self._wire.citation_key]
        if holds_infinity(row.model_extra):
            raise _Refused
        return CitationEvent(row)

    def _fast_summary(self, data: str, offset: int) -> ChatEvent:
        rows = _row_adapters()[1].validate_json(data)[self._wire.citations_key]
        for row in rows:
            if holds_infinity(row.model_extra):
                raise _Refused
        return CitationsSummaryEvent(tuple(rows))


@lru_cache(maxsize=8)
def event_decoder(wire: WireFormat) -> EventDecoder:
    """The `EventDecoder` of `wire` (one per wire format, shared)."""
    return EventDecoder(wire)


def decode_event(name: str, data: str, wire: WireFormat, offset: int = 0) -> ChatEvent:
    """Read one SSE event. Never raises: bad data gives a `MalformedEvent`."""
    return event_decoder(wire)(name, data, offset)
