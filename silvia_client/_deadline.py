"""Deadlines, and the one way to end a read that is blocked.

A `deadline` bounds a whole operation: connecting, every retry and the sleep
before it, and every read. Before a response arrives, the per-request timeouts
are cut to the time left. After that, httpx cannot change a read's timeout,
and closing a response from another thread does not wake a read blocked on
its socket; shutting the socket down does.

So each operation has a `Guard`. It is stopped by the deadline's alarm, by
`ChatStream.close()` from another thread, or after `done` when the rest of a
body takes too long. Stopping sets `guard.reason`, which readers check between
chunks on every transport, and shuts down the socket of the response it
watches, which ends a blocked read at once. The socket is reached through the
response's `network_stream` extension; a transport without one (in-process, a
mock) gets only the check between chunks.

Alarms run on a timer: for the sync client one watchdog thread for the whole
process (a heap of alarms), for the async client the event loop's own
`call_later`. The guard is otherwise the same for both.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

import httpx

__all__ = [
    "Deadline",
    "Guard",
    "Halt",
    "StopReason",
    "has_socket",
    "loop_timer",
    "shutdown_socket",
    "thread_timer",
]

logger = logging.getLogger("silvia_client")

StopReason = Literal["deadline", "closed", "drained"]


class Deadline:
    """When an operation must be over: `seconds` from when it started (`math.inf`: never)."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left (negative once past; `math.inf` without a deadline)."""
        return self.at - time.monotonic()

    def __repr__(self) -> str:
        return f"Deadline({self.seconds:g} s, {self.left():.3g} s left)"


class Halt(Exception):
    """A read stopped by its guard, or at a size limit (`limit` set)."""

    def __init__(self, reason: StopReason | None, limit: int | None = None) -> None:
        super().__init__(reason or f"limit {limit}")
        self.reason = reason
        self.limit = limit


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Timer = Callable[[float, Callable[[], None]], Cancellable]
"""`timer(at, callback)`: run `callback` at monotonic time `at`, unless cancelled first."""


def _socket_of(response: httpx.Response) -> object:
    stream = response.extensions.get("network_stream")
    return stream.get_extra_info("socket") if stream is not None else None


def has_socket(response: httpx.Response) -> bool:
    """Whether a stop can shut a socket down under `response` (not in-process, not a mock)."""
    try:
        return _socket_of(response) is not None
    except Exception:  # a caller's transport may do anything
        return False


def shutdown_socket(response: httpx.Response) -> None:
    """Shut down the socket under `response`, if it has one: a blocked read on it ends now."""
    try:
        sock: Any = _socket_of(response)
        if isinstance(sock, socket.socket):
            # The plain socket's shutdown, also for a TLS socket: `SSLSocket.shutdown`
            # would drop its TLS state under the thread that is reading.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        elif sock is not None:  # asyncio's `TransportSocket`, which wraps the socket
            sock.shutdown(socket.SHUT_RDWR)
    except (
        Exception
    ) as error:  # a caller's transport may do anything; the check between chunks still holds
        logger.debug("could not shut the socket down: %s", type(error).__name__)


class Guard:
    """Stops one operation's reads: its deadline, a close from elsewhere, a bounded drain.

    `watch(response)` names the response whose socket a stop shuts down; a
    response is unwatched (under the same lock) before it is closed or handed
    back to the pool, so a late alarm never touches a connection that is
    someone else's by then.
    """

    __slots__ = ("_alarm", "_lock", "_response", "_timer", "reason")

    def __init__(self, timer: Timer) -> None:
        self.reason: StopReason | None = None
        self._timer = timer
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self._alarm: Cancellable | None = None

    def arm(self, at: float, reason: StopReason) -> None:
        """Stop for `reason` at monotonic time `at` (replacing any alarm set before)."""
        self.disarm()
        if at != math.inf:
            self._alarm = self._timer(at, lambda: self.stop(reason))

    def disarm(self) -> None:
        alarm, self._alarm = self._alarm, None
        if alarm is not None:
            alarm.cancel()

    def watch(self, response: httpx.Response) -> None:
        with self._lock:
            self._response = response
            if self.reason is not None:  # stopped before the response came
                shutdown_socket(response)

    def unwatch(self) -> None:
        with self._lock:
            self._response = None

    def release(self) -> None:
        """The operation is over: no alarm, no response."""
        self.disarm()
        self.unwatch()

    def stop(self, reason: StopReason) -> None:
        """Stop: the flag for the check between chunks, and the socket shut down."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self._response is not None:
                shutdown_socket(self._response)

    def halt(self) -> Halt:
        """The `Halt` a reader raises when it finds the guard stopped."""
        return Halt(self.reason)


# ------------------------------------------------------------------------- the sync clients' timer


class _Alarm:
    __slots__ = ("callback", "pending", "watchdog")

    def __init__(self, watchdog: _Watchdog, callback: Callable[[], None]) -> None:
        self.watchdog = watchdog
        self.callback = callback
        self.pending = True

    def cancel(self) -> None:
        self.watchdog.cancel(self)


class _Watchdog:
    """One thread that runs every sync client's alarms at their time.

    Alarms sit in a heap; a cancelled one stays there until its time (or until
    cancelled ones are most of the heap, which is then rebuilt), so arming and
    cancelling cost a heap push and a flag. The thread starts with the first
    alarm and ends after a minute with none.
    """

    IDLE_EXIT = 60.0

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Alarm]] = []
        self._order = itertools.count()
        self._live = 0
        self._thread: threading.Thread | None = None

    def call_at(self, at: float, callback: Callable[[], None]) -> _Alarm:
        alarm = _Alarm(self, callback)
        with self._cond:
            heapq.heappush(self._heap, (at, next(self._order), alarm))
            self._live += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="silvia-client-deadlines", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is alarm:
                self._cond.notify()
        return alarm

    def cancel(self, alarm: _Alarm) -> None:
        with self._cond:
            if not alarm.pending:
                return
            alarm.pending = False
            self._live -= 1
            heap = self._heap
            if len(heap) > 64 and len(heap) > 2 * self._live:
                self._heap = [entry for entry in heap if entry[2].pending]
                heapq.heapify(self._heap)

    def _next(self) -> _Alarm | None:
        """The next alarm due, waiting for it; None when idle long enough to end."""
        with self._cond:
            while True:
                heap = self._heap
                while heap and not heap[0][2].pending:
                    heapq.heappop(heap)
                if not heap:
                    if not self._cond.wait(self.IDLE_EXIT) and not self._heap:
                        self._thread = None
                        return None
                    continue
                wait = heap[0][0] - time.monotonic()
                if wait <= 0:
                    alarm = heapq.heappop(heap)[2]
                    alarm.pending = False
                    self._live -= 1
                    return alarm
                self._cond.wait(wait)

    def _run(self) -> None:
        while (alarm := self._next()) is not None:
            try:
                alarm.callback()
            except Exception:  # an alarm must not end the thread that runs the others
                logger.debug("a deadline alarm failed", exc_info=True)


_WATCHDOG = _Watchdog()


def thread_timer(at: float, callback: Callable[[], None]) -> Cancellable:
    """The sync clients' `Timer`: the process's watchdog thread."""
    return _WATCHDOG.call_at(at, callback)


def loop_timer(at: float, callback: Callable[[], None]) -> Cancellable:
    """The async clients' `Timer`: the running event loop."""
    import asyncio  # here, not at the top: `import silvia_client` stays without it

    return asyncio.get_running_loop().call_later(max(at - time.monotonic(), 0.0), callback)
