"""How long a turn took, as QA reads it: first byte, first text, done.

Live, the SDK times the turn itself: `Turn.timings` (`silvia_client.chat.Timings`,
seconds since the request went out, None for a milestone the turn never
reached; a partial turn on a `StreamError` carries them too). The observer
takes them from there.

A recorded turn is replayed in a blink, so its `Turn.timings` would time the
replay. For it, a `Stopwatch` reads another clock, one that says when each
replayed chunk arrived when it was recorded (`recorded.py`), and notes the
first event, the first text and `done` as the observer reads them. The first
byte is then the first chunk's arrival: a recording keeps no time for the
response's headers.

`turn_timings(turn, watch)` is the one place that picks between the two.
"""

from __future__ import annotations

from collections.abc import Callable

from ..chat import ChatEvent, DoneEvent, TextEvent, Timings, Turn

__all__ = ["Clock", "Stopwatch", "turn_timings"]

Clock = Callable[[], float]


def _round(value: float) -> float:
    return round(max(value, 0.0), 6)


class Stopwatch:
    """Started when the request goes out, on `clock`; told of each event as it arrives."""

    def __init__(self, clock: Clock) -> None:
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

    def timings(self) -> Timings:
        return Timings(self._first_byte, self._first_text, self._done)


def turn_timings(turn: Turn, watch: Stopwatch | None) -> Timings:
    """The turn's timings: the stopwatch's when there is one (a recording), else the SDK's."""
    return watch.timings() if watch is not None else turn.timings
