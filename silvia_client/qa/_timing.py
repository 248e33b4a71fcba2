"""How long a turn took, as the observer saw it: first byte, first text, done.

`ObservedTimings` holds three moments, in seconds since the request went out,
or None when the turn never got there: `first_byte` (the first event
arrived: the response's first bytes), `first_text` (the first piece of
answer text), `done` (the `done` event). A turn that broke off keeps what it
reached.

`Stopwatch` takes them, as the observer reads the stream: `time.perf_counter`
by default, or any clock, which is how a recording's own arrival times are
read back (`recorded.py`). This is the one place timings are taken, so that
the observer can read them from the SDK's `Turn` instead, should it ever
carry them, by changing this module alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..chat import ChatEvent, DoneEvent, TextEvent

__all__ = ["Clock", "ObservedTimings", "Stopwatch"]

Clock = Callable[[], float]


@dataclass(frozen=True)
class ObservedTimings:
    """Seconds from the request to the first event, the first text, and `done` (None: never)."""

    first_byte: float | None = None
    first_text: float | None = None
    done: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"first_byte": self.first_byte, "first_text": self.first_text, "done": self.done}


def _round(value: float) -> float:
    return round(max(value, 0.0), 6)


class Stopwatch:
    """Started when the request goes out; told of each event as it arrives."""

    def __init__(self, clock: Clock = time.perf_counter) -> None:
        self._clock = clock
        self._start = clock()
        self._first_byte: float | None = None
        self._first_text: float | None = None
        self._done: float | None = None

    def _now(self) -> float:
        return _round(self._clock() - self._start)

    def event(self, event: ChatEvent) -> None:
        """Note `event`'s arrival."""
        if self._first_byte is None:
            self._first_byte = self._now()
        if self._first_text is None and isinstance(event, TextEvent) and event.text:
            self._first_text = self._now()
        elif isinstance(event, DoneEvent) and self._done is None:
            self._done = self._now()

    def timings(self) -> ObservedTimings:
        return ObservedTimings(self._first_byte, self._first_text, self._done)
