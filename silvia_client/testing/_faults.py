"""Ways a turn goes wrong, applied to a turn's steps (or replacing the reply).

Where things are: the stream faults, each placed by counting events
(`after_events`) and named by `kind`; the status faults; the hostile ones are
in `_hostile.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from .. import WireFormat
from ._hostile import (
    EchoToken,
    KeepAliveForever,
    SendEndlessLine,
    SendGzipBomb,
    SendOversizedEvent,
    Trickle,
)
from ._steps import Drop, Effect, Event, Pause, Raw, Step, after_events

__all__ = [
    "DropMidEvent",
    "EchoToken",
    "EndWithoutDone",
    "Fault",
    "HttpError",
    "KeepAliveForever",
    "SendEndlessLine",
    "SendError",
    "SendGzipBomb",
    "SendMalformed",
    "SendOversizedEvent",
    "SendUnknown",
    "Stall",
    "StreamFault",
    "Trickle",
    "status_fault",
]


def _next_event(steps: list[Step], start: int) -> int:
    for index in range(start, len(steps)):
        if isinstance(steps[index], Event):
            return index
    raise ValueError("no event left to cut")


@dataclass(frozen=True)
class HttpError:
    """An error status before any event, with the contract's JSON error body."""

    kind: ClassVar[str] = "http_error"
    status: int
    error_type: str
    message: str
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def retry_after(self) -> float | None:
        for name, value in self.headers:
            if name.lower() == "retry-after":
                return float(value)
        return None


@dataclass(frozen=True)
class DropMidEvent:
    """The connection drops halfway through the event after the first `after_events`."""

    kind: ClassVar[str] = "drop"
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        cut = _next_event(steps, after_events(steps, self.after_events))
        event = steps[cut]
        assert isinstance(event, Event)
        data = event.encode()
        return [*steps[:cut], Raw(data[: len(data) // 2]), Drop()]


@dataclass(frozen=True)
class Stall:
    """Nothing for `seconds` after `after_events` events, then the rest of the turn."""

    kind: ClassVar[str] = "stall"
    seconds: float = 300.0
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        return [*steps[:at], Pause(self.seconds), *steps[at:]]


@dataclass(frozen=True)
class SendMalformed:
    """A known event name whose data is not what it should be (raw bytes, as given)."""

    kind: ClassVar[str] = "malformed_event"
    event: str = "citation"
    data: str = '{"citation": {"source": "silvia://your-account/checking", '
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        raw = Raw(f"event: {self.event}\ndata: {self.data}\n\n".encode())
        return [*steps[:at], raw, *steps[at:]]


@dataclass(frozen=True)
class SendUnknown:
    """An event name the contract does not define; the turn still completes."""

    kind: ClassVar[str] = "unknown_event"
    event: str = "tool_progress"
    data: object = None
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        data = {"tool": "execute_sql", "status": "running"} if self.data is None else self.data
        return [*steps[:at], Event(self.event, data), *steps[at:]]


@dataclass(frozen=True)
class SendError:
    """An in-band `error` event after `after_events` events; the stream ends there."""

    kind: ClassVar[str] = "error_event"
    error_type: str = "overloaded_error"
    message: str = "The model is overloaded. Try again in a moment."
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        error = {wire.error_key: {"type": self.error_type, "message": self.message}}
        return [*steps[:at], Event(wire.events.error, error)]


@dataclass(frozen=True)
class EndWithoutDone:
    """The whole turn but no `done`: the body ends cleanly where `done` would be.

    The turn never completes, so the assistant's message is not stored either.
    """

    kind: ClassVar[str] = "no_done"

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        done = [
            index
            for index, step in enumerate(steps)
            if isinstance(step, Event) and step.name == wire.events.done
        ]
        if not done:
            return list(steps)
        kept = steps[: done[-1]]
        if kept and isinstance(kept[-1], Effect):
            kept.pop()  # the storing of the completed turn, which never completes
        return kept


StreamFault: TypeAlias = (
    DropMidEvent
    | Stall
    | SendMalformed
    | SendUnknown
    | SendError
    | EndWithoutDone
    | SendEndlessLine
    | SendOversizedEvent
    | SendGzipBomb
    | Trickle
    | KeepAliveForever
    | EchoToken
)
Fault: TypeAlias = HttpError | StreamFault


def status_fault(fault: Fault | None, token: str = "") -> HttpError | None:
    """The status `fault` answers with before any event, for a request carrying `token`."""
    if isinstance(fault, EchoToken) and fault.status is not None:
        return HttpError(fault.status, fault.error_type, fault.message_for(token))
    return fault if isinstance(fault, HttpError) else None
