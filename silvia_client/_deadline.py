"""Deadlines, and the one way to end a read that is blocked.

A `deadline` bounds a whole operation: connecting, every retry and the sleep
before it, and every read. Each request's timeouts are cut to the time left
(`Call.timeouts`), and so is a chat stream's wait between events, set as its
body's reading starts (`Call.wait_between_events`). A read already waiting
keeps the timeout it began with, and closing a response from another thread
does not wake a read blocked on its socket; shutting the socket down does.

`Call` is one operation (a chat turn, a GET): its `RequestOptions` and, once
started, its deadline, its `Guard` and, when tracing is on, its spans; its
decisions (the next attempt's timeouts, whether the deadline has passed) do
no I/O.

So each operation has a `Guard`, stopped by the deadline's alarm, by a
`close()` of the stream or the client from another thread, or by a drain after
`done` that takes too long. A stop sets `guard.reason`, which readers check
between chunks on every transport, and shuts down the socket of the response
it watches (found through the `network_stream` extension; a transport without
one, in-process or a mock, gets only the check between chunks).

Alarms run on a `Timer`, for every client, sync or async: one watchdog thread
for the whole process (`thread_timer`; a forked child starts its own: see
`_Watchdog`). An alarm only sets a flag and shuts a socket down, which is safe
from another thread, so an async client's deadline fires the same way under any
event loop (asyncio, trio): nothing here names one.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx

from .errors import APITimeoutError

if TYPE_CHECKING:
    from ._options import RequestOptions
    from ._tracing import Operation

__all__ = [
    "Call",
    "Guard",
    "Halt",
    "Lifecycle",
    "StopReason",
    "Timer",
    "thread_timer",
]

logger = logging.getLogger("silvia_client")

StopReason = Literal["deadline", "closed", "drained"]


class Halt(Exception):
    """A read stopped by its guard, or at a size limit (`limit` set)."""

    def __init__(self, reason: StopReason | None, limit: int | None = None) -> None:
        super().__init__(reason or f"limit {limit}")
        self.reason = reason
        self.limit = limit


Timer = Callable[[float, Callable[[], None]], Callable[[], None]]
"""`timer(at, callback)`: run `callback` at monotonic time `at`; calling what it returns cancels."""


def _shutdown(sock: Any) -> None:
    """Shut `sock` down: a read blocked on it ends now."""
    try:
        if isinstance(sock, socket.socket):
            # The plain socket's shutdown, also for a TLS socket: `SSLSocket.shutdown`
            # would drop its TLS state under the thread that is reading.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        else:  # asyncio's `TransportSocket`, which wraps the socket
            sock.shutdown(socket.SHUT_RDWR)
    except Exception as error:  # the check between chunks still holds
        logger.debug("could not shut the socket down: %s", type(error).__name__)


class Guard:
    """Stops one operation's reads: its deadline, a close from elsewhere, a bounded drain.

    `watch(response)` names the response whose socket (`socket`, None for a
    transport without one) a stop shuts down; a response is unwatched (under the
    same lock) before it is closed or handed back to the pool, so a late alarm
    never touches a connection that is someone else's by then.
    """

    __slots__ = ("__weakref__", "_cancel", "_lock", "_timer", "reason", "socket")

    def __init__(self, timer: Timer) -> None:
        self.reason: StopReason | None = None
        self.socket: Any = None
        self._timer = timer
        self._lock = threading.Lock()
        self._cancel: Callable[[], None] | None = None

    def arm(self, at: float, reason: StopReason) -> None:
        """Stop for `reason` at monotonic time `at` (replacing any alarm set before)."""
        if self._cancel is not None:
            self._cancel()
        self._cancel = None if at == math.inf else self._timer(at, lambda: self.stop(reason))

    def watch(self, response: httpx.Response | None) -> None:
        """Shut `response`'s socket down on a stop (None: no response to shut down now)."""
        sock = None
        if response is not None:
            try:
                stream = response.extensions.get("network_stream")
                sock = None if stream is None else stream.get_extra_info("socket")
            except Exception:  # a caller's transport may do anything
                sock = None
        with self._lock:
            self.socket = sock
            if sock is not None and self.reason is not None:  # stopped before it came
                _shutdown(sock)

    def release(self) -> None:
        """The operation is over: no alarm, no response."""
        self.arm(math.inf, "deadline")
        self.watch(None)

    def stop(self, reason: StopReason) -> None:
        """Stop: the flag for the check between chunks, and the socket shut down."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self.socket is not None:
                _shutdown(self.socket)

    def halt(self) -> Halt:
        """The `Halt` a reader raises when it finds the guard stopped."""
        return Halt(self.reason)


@dataclass(eq=False)
class Call:
    """One operation: its options, and once `start`ed, its deadline (`at`) and its guard."""

    options: RequestOptions
    at: float = field(default=math.inf, init=False)  # monotonic time the deadline passes
    guard: Guard | None = field(default=None, init=False)  # set by `start`
    trace: Operation | None = field(default=None, init=False)  # its spans; None: tracing off

    def start(self, timer: Timer) -> Guard:
        """Start the clock: the deadline runs from now, and the guard's alarm is set."""
        self.at = time.monotonic() + self.options.deadline
        self.guard = guard = Guard(timer)
        guard.arm(self.at, "deadline")
        return guard

    def left(self) -> float:
        """Seconds left before the deadline (negative once past; `math.inf`: none)."""
        return self.at - time.monotonic()

    def expired(self) -> bool:
        """Whether the deadline has passed (or its alarm stopped the guard)."""
        stopped = self.guard is not None and self.guard.reason == "deadline"
        return stopped or self.left() <= 0

    def timed_out(self) -> APITimeoutError:
        """The error a call past its deadline raises, naming the deadline."""
        return APITimeoutError(f"the deadline of {self.options.deadline:g} s passed")

    def timeouts(self) -> dict[str, float | None]:
        """The next attempt's timeouts, each cut to the time left (`APITimeoutError` if none is).

        The read timeout bounds the wait for the response's head, a chat turn's
        too; a chat stream's reads after the head wait `idle_timeout` instead
        (`wait_between_events`).
        """
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.timed_out()
        phases = self.options.timeout.as_dict()
        if left == math.inf:
            return phases
        return {phase: left if s is None else min(s, left) for phase, s in phases.items()}

    def wait_between_events(self, request: httpx.Request) -> None:
        """From the head on, a chat stream's reads wait `idle_timeout`, cut to the time left.

        Called as the body's reading starts (`Halt` if the deadline has passed).
        httpcore reads the read timeout from the request's `timeout` extension
        when a body's reading starts (HTTP/1.1) and on every read (HTTP/2): set
        here, it bounds each wait between events.
        """
        left = self.at - time.monotonic()
        if left <= 0:
            raise Halt("deadline")
        idle = None if self.options.idle_timeout == math.inf else self.options.idle_timeout
        if left != math.inf:
            idle = left if idle is None else min(idle, left)
        request.extensions["timeout"] = {**request.extensions.get("timeout", {}), "read": idle}


class Lifecycle:
    """A client's open-or-closed state, shared with its `with_options` copies.

    It tracks every operation's guard (weakly: a guard goes with its stream), so
    that `close()` stops them all.
    """

    __slots__ = ("_guards", "_lock", "closed")

    def __init__(self) -> None:
        self.closed = False
        self._lock = threading.Lock()
        self._guards: weakref.WeakSet[Guard] = weakref.WeakSet()

    def track(self, guard: Guard) -> Guard:
        with self._lock:
            if self.closed:  # closed while this call was being set up
                guard.stop("closed")
            self._guards.add(guard)
        return guard

    def close(self) -> None:
        """Closed from now on; every operation still running is stopped."""
        with self._lock:
            self.closed = True
            guards = list(self._guards)
        for guard in guards:
            guard.stop("closed")


# ------------------------------------------------------------------------------ the clients' timer


class _Watchdog:
    """One thread that runs every client's alarms at their time.

    An alarm is a one-item list, its callback, in a heap; cancelling it empties
    the list, which stays there until it is first or arming finds the heap
    mostly cancelled and rebuilds it. So arming and cancelling cost a heap push
    and a `list.clear`. The thread starts with the first alarm and
    ends after a minute with none. A wait is never longer than
    `threading.TIMEOUT_MAX` (an alarm further off is simply waited for again).

    The watchdog is its process's. In a child forked from it, the thread does not
    run (only the thread that forked goes on), its lock may have been held at the
    fork, and the alarms in the heap are the parent's: one fired there would shut
    down a socket the parent is reading. So the first alarm armed in another process
    starts it over: an empty heap, a new lock, a new thread. That is a process id
    compared at each arming, not a process-wide fork hook.
    """

    IDLE_EXIT = 60.0
    FORK_LOCK_WAIT = 1.0  # starting over takes microseconds; longer, the lock was held at fork

    def __init__(self) -> None:
        self._fork_lock = threading.Lock()
        self._start_over()

    def _start_over(self) -> None:
        self._pid = os.getpid()
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, list[Callable[[], None]]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def _forked(self) -> None:
        """Start over in this process, once, however many of its threads arrive here."""
        held = self._fork_lock.acquire(timeout=self.FORK_LOCK_WAIT)
        try:
            if self._pid != os.getpid():
                self._start_over()
        finally:
            if held:
                self._fork_lock.release()
            else:  # held by a thread of the parent when it forked: released nowhere here
                self._fork_lock = threading.Lock()

    def call_at(self, at: float, callback: Callable[[], None]) -> Callable[[], None]:
        if self._pid != os.getpid():  # a forked child: the parent's thread does not run here
            self._forked()
        alarm = [callback]
        with self._cond:
            heap = self._heap
            if len(heap) > 64 and len(heap) % 64 == 0:  # now and then, drop the cancelled
                self._heap = heap = [entry for entry in heap if entry[2]]
                heapq.heapify(heap)
            heapq.heappush(heap, (at, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="silvia-client-deadlines", daemon=True
                )
                self._thread.start()
            elif heap[0][2] is alarm:
                self._cond.notify()
        return alarm.clear

    def _next(self) -> Callable[[], None] | None:
        """The next alarm's callback, once due; None when idle long enough to end."""
        with self._cond:
            while True:
                heap = self._heap
                if not heap:
                    if not self._cond.wait(self.IDLE_EXIT) and not self._heap:
                        self._thread = None
                        return None
                    continue
                wait = heap[0][0] - time.monotonic()
                if wait > 0 and heap[0][2]:
                    self._cond.wait(min(wait, threading.TIMEOUT_MAX))
                    continue
                try:
                    return heapq.heappop(heap)[2].pop()
                except IndexError:  # a cancelled alarm, dropped as soon as it is first
                    continue

    def _run(self) -> None:
        while (callback := self._next()) is not None:
            try:
                callback()
            except Exception:  # an alarm must not end the thread that runs the others
                logger.debug("a deadline alarm failed", exc_info=True)


thread_timer: Timer = _Watchdog().call_at
"""Every client's `Timer`: the process's watchdog thread."""
