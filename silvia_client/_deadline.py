"""Deadlines, and the one way to end a read that is blocked.

A `deadline` bounds a whole operation: connecting, every retry and the sleep
before it, and every read. Before a response arrives, the per-request timeouts
are cut to the time left (`Call.timeouts`). After that, httpx cannot change a
read's timeout, and closing a response from another thread does not wake a
read blocked on its socket; shutting the socket down does.

So each operation has a `Guard`. It is stopped by the deadline's alarm, by
`ChatStream.close()` or the client's `close()` from another thread, or after
`done` when the rest of a body takes too long. Stopping sets `guard.reason`,
which readers check between chunks on every transport, and shuts down the
socket of the response it watches, which ends a blocked read at once. The
socket is reached through the response's `network_stream` extension; a
transport without one (in-process, a mock) gets only the check between chunks.

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
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import httpx

__all__ = ["Guard", "Halt", "Lifecycle", "StopReason", "loop_timer", "socket_of", "thread_timer"]

logger = logging.getLogger("silvia_client")

StopReason = Literal["deadline", "closed", "drained"]


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


def socket_of(response: httpx.Response) -> Any:
    """The socket under `response`, or None (in-process, a mock: nothing to shut down)."""
    try:
        stream = response.extensions.get("network_stream")
        return None if stream is None else stream.get_extra_info("socket")
    except Exception:  # a caller's transport may do anything
        return None


def _shutdown(response: httpx.Response) -> None:
    """Shut down the socket under `response`, if it has one: a blocked read on it ends now."""
    sock = socket_of(response)
    try:
        if isinstance(sock, socket.socket):
            # The plain socket's shutdown, also for a TLS socket: `SSLSocket.shutdown`
            # would drop its TLS state under the thread that is reading.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        elif sock is not None:  # asyncio's `TransportSocket`, which wraps the socket
            sock.shutdown(socket.SHUT_RDWR)
    except Exception as error:  # the check between chunks still holds
        logger.debug("could not shut the socket down: %s", type(error).__name__)


class Guard:
    """Stops one operation's reads: its deadline, a close from elsewhere, a bounded drain.

    `watch(response)` names the response whose socket a stop shuts down; a
    response is unwatched (under the same lock) before it is closed or handed
    back to the pool, so a late alarm never touches a connection that is
    someone else's by then.
    """

    __slots__ = ("__weakref__", "_alarm", "_lock", "_response", "_timer", "reason")

    def __init__(self, timer: Timer) -> None:
        self.reason: StopReason | None = None
        self._timer = timer
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self._alarm: Cancellable | None = None

    def arm(self, at: float, reason: StopReason) -> None:
        """Stop for `reason` at monotonic time `at` (replacing any alarm set before)."""
        if self._alarm is not None:
            self._alarm.cancel()
        self._alarm = None if at == math.inf else self._timer(at, lambda: self.stop(reason))

    def watch(self, response: httpx.Response | None) -> None:
        """Shut `response`'s socket down on a stop (None: no response to shut down now)."""
        with self._lock:
            self._response = response
            if response is not None and self.reason is not None:  # stopped before it came
                _shutdown(response)

    def release(self) -> None:
        """The operation is over: no alarm, no response."""
        self.arm(math.inf, "deadline")
        self.watch(None)

    def stop(self, reason: StopReason) -> None:
        """Stop: the flag for the check between chunks, and the socket shut down."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self._response is not None:
                _shutdown(self._response)

    def halt(self) -> Halt:
        """The `Halt` a reader raises when it finds the guard stopped."""
        return Halt(self.reason)


class Lifecycle:
    """A client's open-or-closed state, shared with its `with_options` copies.

    Every operation's guard is tracked (weakly: a guard goes with its stream), so
    that `close()` stops them all, and a read blocked in any thread ends with
    the stream's error, its partial turn kept.
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


# ------------------------------------------------------------------------- the sync clients' timer


@dataclass(eq=False)
class _Alarm:
    """One entry of the watchdog's heap; `cancel` empties it, and the thread skips it."""

    at: float
    callback: Callable[[], None] | None

    def cancel(self) -> None:
        self.callback = None


class _Watchdog:
    """One thread that runs every sync client's alarms at their time.

    Alarms sit in a heap; a cancelled one stays there until its time, unless
    arming finds the heap mostly cancelled and rebuilds it. So arming and
    cancelling cost a heap push and a store. The thread starts with the first
    alarm and ends after a minute with none. A wait is never longer than
    `threading.TIMEOUT_MAX` (an alarm further off is simply waited for again).
    """

    IDLE_EXIT = 60.0

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Alarm]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def call_at(self, at: float, callback: Callable[[], None]) -> _Alarm:
        alarm = _Alarm(at, callback)
        with self._cond:
            heap = self._heap
            if len(heap) > 64 and len(heap) % 64 == 0:  # now and then, drop the cancelled
                self._heap = heap = [entry for entry in heap if entry[2].callback is not None]
                heapq.heapify(heap)
            heapq.heappush(heap, (at, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="silvia-client-deadlines", daemon=True
                )
                self._thread.start()
            elif heap[0][2] is alarm:
                self._cond.notify()
        return alarm

    def _next(self) -> Callable[[], None] | None:
        """The next alarm's callback, once due; None when idle long enough to end."""
        with self._cond:
            while True:
                heap = self._heap
                while heap and heap[0][2].callback is None:
                    heapq.heappop(heap)
                if not heap:
                    if not self._cond.wait(self.IDLE_EXIT) and not self._heap:
                        self._thread = None
                        return None
                    continue
                wait = heap[0][0] - time.monotonic()
                if wait <= 0:
                    alarm = heapq.heappop(heap)[2]
                    callback, alarm.callback = alarm.callback, None
                    if callback is not None:
                        return callback
                    continue
                self._cond.wait(min(wait, threading.TIMEOUT_MAX))

    def _run(self) -> None:
        while (callback := self._next()) is not None:
            try:
                callback()
            except Exception:  # an alarm must not end the thread that runs the others
                logger.debug("a deadline alarm failed", exc_info=True)


thread_timer: Timer = _Watchdog().call_at
"""The sync clients' `Timer`: the process's watchdog thread."""


def loop_timer(at: float, callback: Callable[[], None]) -> Cancellable:
    """The async clients' `Timer`: the running event loop."""
    import asyncio  # here, not at the top: `import silvia_client` stays without it

    return asyncio.get_running_loop().call_later(max(at - time.monotonic(), 0.0), callback)
