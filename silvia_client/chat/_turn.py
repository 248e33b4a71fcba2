"""The assembled `Turn`, and `TurnBuilder.apply`: the one place a turn is built from its events.

Building is O(1) per event (text pieces appended, joined once), and so is a stream's
`current_turn` (`TurnBuilder.snapshot`, a `TurnSoFar`): a turn of copied text per read
would make reading after every event quadratic. Every row keeps the target the server
sent it; `Turn.target_for` reads the server's final word off the rows (`citations._targets`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from time import perf_counter
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from .._records import Shared, to_json
from ..citations import CitationTarget, RowError
from ..citations._targets import FinalTargets
from .events import (
    ChatEvent,
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
)

if TYPE_CHECKING:
    from ..citations import Citation, InlineCitation


_PREVIEW_CHARS = 60
T = TypeVar("T")


def text_preview(text: str) -> str:
    """The start of `text`, for a repr: at most 60 characters, and "…" when cut."""
    return text[:_PREVIEW_CHARS] + ("…" if len(text) > _PREVIEW_CHARS else "")


@dataclass(frozen=True, slots=True)
class Timings:
    """Seconds (`time.perf_counter`) from the request to the response's head (`first_byte`),
    the first piece of the answer (`first_text`) and the `done` event; None if not reached."""

    first_byte: float | None = None
    first_text: float | None = None
    done: float | None = None


@dataclass(frozen=True, eq=False)
class Turn(FinalTargets, Shared):
    """One chat turn as the client assembled it.

    `citations` are the `citations_summary` rows as sent; `inline_citations`
    are the streamed rows as sent, in order, each with its own target and its
    `offset` in `text`. A source's rows may carry different targets (the
    server pools accounts, or untypes a source, as the turn goes on);
    `target_for` is where the source ended. `complete` is True only when
    `done` arrived. `timings` says when the turn reached its milestones.
    """

    _said: ClassVar[str] = "turn"
    text: str = ""
    citations: tuple[Citation, ...] = ()
    inline_citations: tuple[InlineCitation, ...] = ()
    session_id: str | None = None
    request_id: str | None = None  # the response's x-request-id: the id to quote to support
    message: dict[str, Any] | None = field(default=None, repr=False)
    complete: bool = False
    error: ErrorEvent | None = None
    unknown_events: tuple[UnknownEvent, ...] = ()
    malformed_events: tuple[MalformedEvent, ...] = ()
    citation_errors: tuple[RowError, ...] = ()
    timings: Timings = field(default_factory=Timings, repr=False)
    # Each cited source's final target, read off the rows on first use (see `_final_targets`).
    _targets: dict[str, CitationTarget | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source the turn cited, in order of first appearance."""
        return tuple(self._final_targets())

    def __repr__(self) -> str:
        return (
            f"Turn(session_id={self.session_id!r}, complete={self.complete}, "
            f"text={text_preview(self.text)!r}, citations={len(self.citations)}, "
            f"inline_citations={len(self.inline_citations)})"
        )

    def to_json(self, *, include_provider: bool = False, indent: int | None = 2) -> str:
        """The turn as a JSON document: text, rows with targets, timings, ids (`_records.py`)."""
        return to_json(self, include_provider, indent)


class _CopiedOnFirstUse(Generic[T]):
    """A field of `TurnSoFar` (a descriptor-typed dataclass field, as `dataclasses` has them):
    copied out of its builder's lists on first read, then kept; read off the class, its default."""

    _name: str  # the field's, given by `__set_name__`

    def __init__(self, default: T, copy: Callable[[TurnSoFar], T]) -> None:
        self._default = default
        self._copy = copy

    def __set_name__(self, owner: type[TurnSoFar], name: str) -> None:
        self._name = name

    def __get__(self, turn: TurnSoFar | None, owner: type[TurnSoFar]) -> T:
        if turn is None:  # the dataclass asks for the field's default
            return self._default
        kept = turn._kept  # filled in place: the frozen value is never reassigned
        if self._name not in kept:
            kept[self._name] = self._copy(turn)
        return cast(T, kept[self._name])

    def __set__(self, turn: TurnSoFar, default: T) -> None:
        """`__init__` gives the field's default: the builder holds the value."""


@dataclass(frozen=True, eq=False, repr=False)
class TurnSoFar(Turn):
    """A `Turn` as its builder stood when it was taken: what a stream's `current_turn` gives.

    Its text and rows are copied off the builder's lists (which only grow) up to `_reach`
    on first use, then kept. It pickles and copies as a plain `Turn`.
    """

    text: _CopiedOnFirstUse[str] = _CopiedOnFirstUse(
        "", lambda turn: turn._source._text_to(turn._reach[0])
    )
    inline_citations: _CopiedOnFirstUse[tuple[InlineCitation, ...]] = _CopiedOnFirstUse(
        (), lambda turn: tuple(turn._source._inline[: turn._reach[1]])
    )
    unknown_events: _CopiedOnFirstUse[tuple[UnknownEvent, ...]] = _CopiedOnFirstUse(
        (), lambda turn: tuple(turn._source._unknown[: turn._reach[2]])
    )
    malformed_events: _CopiedOnFirstUse[tuple[MalformedEvent, ...]] = _CopiedOnFirstUse(
        (), lambda turn: tuple(turn._source._malformed[: turn._reach[3]])
    )
    citation_errors: _CopiedOnFirstUse[tuple[RowError, ...]] = _CopiedOnFirstUse(
        (), lambda turn: tuple(turn._source._citation_errors[: turn._reach[4]])
    )
    _source: TurnBuilder = field(default_factory=lambda: TurnBuilder(), repr=False)
    # How far the lists had come: text pieces, inline rows, unknown, malformed, row errors.
    _reach: tuple[int, ...] = field(default=(0, 0, 0, 0, 0), repr=False)
    _kept: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def turn(self) -> Turn:
        """The same turn as a plain `Turn`, its text and rows copied out of the builder."""
        return Turn(**{item.name: getattr(self, item.name) for item in fields(Turn) if item.init})

    def __reduce__(self) -> tuple[Any, ...]:
        # As the plain Turn it stands for, without its builder: an empty Turn, then its fields.
        return (Turn, (), vars(self.turn()))


class TurnBuilder:
    """Applies events, one at a time, to a turn under construction."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.request_id: str | None = None  # the stream sets it when the response comes
        self.done: bool = False
        self.error: ErrorEvent | None = None
        self.events: int = 0  # how many have been applied (a span's `silvia.turn.events`)
        self.text_length: int = 0  # the answer's length so far: the offset of a citation now
        self._pieces: list[str] = []
        self._inline: list[InlineCitation] = []
        self._summary: tuple[Citation, ...] = ()
        self._citation_errors: list[RowError] = []
        self._unknown: list[UnknownEvent] = []
        self._malformed: list[MalformedEvent] = []
        self._message: dict[str, Any] | None = None
        # `perf_counter()` stamps: the stream sets the first two, `apply` the others.
        self.started_at: float | None = None
        self.first_byte_at: float | None = None
        self.first_text_at: float | None = None
        self.done_at: float | None = None
        # `snapshot()`'s last answer and what it was taken at; the text joined so far.
        self._snapshot: TurnSoFar | None = None
        self._snapshot_key: tuple[object, ...] = ()
        self._joined: tuple[int, str] = (0, "")  # how many pieces, and their text

    def apply(self, event: ChatEvent) -> None:
        """Add one event to the turn being built."""
        self.events += 1
        # Ordered by how often each event arrives.
        if isinstance(event, TextEvent):
            if self.first_text_at is None:
                self.first_text_at = perf_counter()
            self._pieces.append(event.text)
            self.text_length += len(event.text)
        elif isinstance(event, CitationEvent):
            self._inline.append(event.citation)
        elif isinstance(event, CitationsSummaryEvent):
            self._summary = tuple(event.citations)
            self._citation_errors.extend(event.errors)
        elif isinstance(event, SessionEvent):
            self.session_id = event.session_id
        elif isinstance(event, MessageEvent):
            self._message = event.message
        elif isinstance(event, DoneEvent):
            self.done = True
            self.done_at = perf_counter()
        elif isinstance(event, ErrorEvent):
            self.error = event
        elif isinstance(event, UnknownEvent):
            self._unknown.append(event)
        else:
            self._malformed.append(event)

    def timings(self) -> Timings:
        """Seconds from the start to the first byte, the first text and `done`, so far."""
        start = self.started_at
        if start is None:  # no start: nothing to count from
            return Timings()
        stamps = (self.first_byte_at, self.first_text_at, self.done_at)
        return Timings(*(None if stamp is None else stamp - start for stamp in stamps))

    def snapshot(self) -> TurnSoFar:
        """The turn as it stands, in O(1): the same one until something changes it."""
        key = (self.events, self.request_id, self.started_at, self.first_byte_at)
        if self._snapshot is None or self._snapshot_key != key:
            self._snapshot = TurnSoFar(
                citations=self._summary,
                session_id=self.session_id,
                request_id=self.request_id,
                message=self._message,
                complete=self.done and self.error is None,
                error=self.error,
                timings=self.timings(),
                _source=self,
                _reach=(  # how far each list a `TurnSoFar` reads on first use has come
                    len(self._pieces),
                    len(self._inline),
                    len(self._unknown),
                    len(self._malformed),
                    len(self._citation_errors),
                ),
            )
            self._snapshot_key = key
        return self._snapshot

    def _text_to(self, pieces: int) -> str:
        """The text of the first `pieces` pieces, joined from where the last call left off."""
        done, joined = self._joined
        if pieces < done:  # an older snapshot read late: its own join
            return "".join(self._pieces[:pieces])
        joined += "".join(self._pieces[done:pieces])
        self._joined = (pieces, joined)
        return joined

    def build(self) -> Turn:
        """The turn as it stands: complete if `done` arrived and no error did."""
        return Turn(
            text="".join(self._pieces),
            citations=self._summary,
            inline_citations=tuple(self._inline),
            session_id=self.session_id,
            request_id=self.request_id,
            message=self._message,
            complete=self.done and self.error is None,
            error=self.error,
            unknown_events=tuple(self._unknown),
            malformed_events=tuple(self._malformed),
            citation_errors=tuple(self._citation_errors),
            timings=self.timings(),
        )
