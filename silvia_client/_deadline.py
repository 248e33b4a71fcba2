"""One call: its options, checked by one table; its deadline; the one way to end a blocked read.

- `RULES`, `check`, `RequestOptions`: a call's options, refused when given (a
  `ConfigurationError`, never a `ValueError` from httpx later).
- `Call`: its deadline bounds connecting, every retry and the wait before it, and every
  read (each cut to the time left).
- `Guard`: a read already waiting keeps its timeout, and closing its response from
  another thread does not wake it; shutting its socket down does. So the deadline's
  alarm, a `close()` from elsewhere (`Lifecycle`), or a drain that takes too long stops
  the guard: `reason` is set (readers check it between chunks) and the socket is shut down.
- `thread_timer`: an alarm only sets a flag and shuts a socket down, safe from any thread.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import httpx

from ._wire import DEFAULTS
from .errors import APITimeoutError, ConfigurationError

if TYPE_CHECKING:
    from ._tracing import Operation


logger = logging.getLogger("silvia_client")

StopReason = Literal["deadline", "closed", "drained"]

Kind = Literal["chat", "get"]


class _Refused(Exception):
    """A reader's "no": the rule's error, or `f"{name}: {detail}"` when it says more."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within_clock(seconds: object) -> bool:  # 0 to `max_seconds`, or inf
    return seconds == math.inf or 0 <= seconds <= DEFAULTS.max_seconds  # type: ignore[operator]


def _timeout(value: object) -> httpx.Timeout:
    if isinstance(value, httpx.Timeout):
        timeout = value
    elif value is None or _is_number(value):
        timeout = httpx.Timeout(value)  # type: ignore[arg-type]
    else:
        raise _Refused
    for phase, seconds in timeout.as_dict().items():
        if seconds is not None and not (_is_number(seconds) and seconds > 0):  # 0, <0, NaN
            raise _Refused(f"the {phase} timeout must be above 0 seconds (None: none)")
        if seconds is not None and (seconds == math.inf or not _within_clock(seconds)):
            raise _Refused(f"the {phase} timeout must be at most {DEFAULTS.max_seconds:g} s")
    return timeout


def _wait(value: object) -> float:  # above 0 (`math.inf`: none)
    if not _is_number(value) or not _within_clock(value) or not value > 0:  # type: ignore[operator]
        raise _Refused
    return float(value)  # type: ignore[arg-type]


def _backoff(value: object) -> float:  # 0 or more, and finite
    if not _is_number(value) or not _within_clock(value) or value == math.inf:
        raise _Refused
    return float(value)  # type: ignore[arg-type]


def _whole(value: object, *, least: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise _Refused
    return value


def _text(value: str, *, blank: bool = False) -> str:
    # `blank`: only whitespace is as empty as nothing
    if not value or (blank and not value.strip()):
        raise _Refused
    return value


def _tracer_provider(value: object) -> object:
    if not callable(getattr(value, "get_tracer", None)):
        raise _Refused
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise _Refused
    return value


def _headers(value: object) -> httpx.Headers:
    if not isinstance(value, Mapping):
        raise _Refused
    # Checked here: httpx before 0.28 reads any other type with an AttributeError.
    if not all(isinstance(item, str | bytes) for pair in value.items() for item in pair):
        raise _Refused("header names and values must be str or bytes")
    try:
        return httpx.Headers(value)
    except (TypeError, ValueError, UnicodeEncodeError) as error:
        raise _Refused(type(error).__name__) from None


def _fields(value: object, *, query: bool = False) -> dict[str, Any]:
    # Names (`str`) to values: a query's a `str`, an `int` or a `float` (not a bool), a
    # body's what JSON can carry.
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise _Refused
    if query:
        for item in value.values():
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise _Refused
        return dict(value)
    try:
        json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError) as error:  # a set, an object, NaN, a circle
        raise _Refused(f"cannot be sent as JSON ({type(error).__name__})") from None
    return dict(value)


@dataclass(frozen=True)
class Rule:
    """One argument's row: `read` gives the value as the SDK keeps it, or refuses it."""

    read: Callable[[Any], Any]
    error: str  # the `ConfigurationError` for what it refuses: what the row accepts
    # None: kept (`optional`), read as an empty mapping (`empty`), or read as any value.
    none: Literal["optional", "empty", "read"] = "read"
    # A text row: another type than `str` is a `TypeError`, as Python's own functions
    # raise, and `read` gets a `str` that can go out as UTF-8.
    type_error: bool = False


_MAX = f"{DEFAULTS.max_seconds:g}"
_SECONDS = f"must be a number of seconds above 0, at most {_MAX} (math.inf: none)"
_BYTES = "must be a whole number of bytes above 0"
_HEADERS = "must be a mapping of header names to values (str or bytes), or None"

# The constructors take every row; `with_options` and a call, those they have.
RULES: Mapping[str, Rule] = {
    "timeout": Rule(
        _timeout,
        f"timeout must be seconds for every phase (above 0, at most {_MAX}), an httpx.Timeout "
        "or None (none)",
    ),
    "idle_timeout": Rule(_wait, f"idle_timeout {_SECONDS}"),
    "deadline": Rule(_wait, f"deadline {_SECONDS}, or None for the defaults", "optional"),
    "max_event_bytes": Rule(_whole, f"max_event_bytes {_BYTES}"),
    "max_response_bytes": Rule(_whole, f"max_response_bytes {_BYTES}"),
    "max_retries": Rule(partial(_whole, least=0), "max_retries must be a whole number, 0 or more"),
    "retry_backoff": Rule(_backoff, f"retry_backoff must be a number of seconds, 0 to {_MAX}"),
    "message": Rule(
        partial(_text, blank=DEFAULTS.refuse_blank_message),
        "message must not be empty or only whitespace",
        type_error=True,
    ),
    "session_id": Rule(
        _text,
        "session_id must not be empty (leave it out for a new session)",
        "optional",
        type_error=True,
    ),
    "tracer_provider": Rule(
        _tracer_provider,
        "tracer_provider must be an OpenTelemetry TracerProvider, or None",
        "optional",
    ),
    "propagate_context": Rule(_flag, "propagate_context must be True or False"),
    "default_headers": Rule(_headers, f"default_headers {_HEADERS}", "empty"),
    "extra_headers": Rule(_headers, f"extra_headers {_HEADERS}", "empty"),
    "extra_body": Rule(
        _fields, "extra_body must be a mapping of field names (str) to JSON values", "empty"
    ),
    "extra_query": Rule(
        partial(_fields, query=True),
        "extra_query must be a mapping of parameter names (str) to str, int or float",
        "empty",
    ),
}


def check(name: str, value: object) -> Any:
    """`value` as the SDK keeps it, if `RULES[name]` accepts it; else `ConfigurationError`."""
    rule = RULES[name]
    if value is None and rule.none != "read":
        if rule.none == "optional":
            return None
        value = {}
    if rule.type_error:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigurationError(
                f"{name} cannot be encoded as UTF-8 (it holds a lone surrogate)"
            ) from None
    try:
        return rule.read(value)
    except _Refused as refused:
        raise ConfigurationError(f"{name}: {refused}" if refused.args else rule.error) from None


@dataclass(frozen=True)
class RequestOptions:
    """One call's options (the keywords of `chat.stream`, `chat.send`, `sessions.get` and
    `get_raw`, each None for the client's), checked (`RULES`), over the client's, as its
    arguments of the same names: `extra_headers` over `default_headers` (a name in any case
    replaces it); `extra_body` (a chat turn's, never its message or session id) and
    `extra_query` over the client's own (`with_options`)."""

    kind: Kind
    headers: httpx.Headers  # the client's, the call's, the SDK's own
    timeout: httpx.Timeout
    idle_timeout: float
    deadline: float
    max_event_bytes: int
    max_response_bytes: int
    max_values: int  # the most JSON values and SSE events the call reads (`_sse.most_values`)
    extra_body: Mapping[str, object]
    extra_query: Mapping[str, str | int | float]

    @property
    def repeatable(self) -> bool:
        """Whether sending the request twice is safe: a GET is, a chat POST is not."""
        return self.kind == "get"


class Halt(Exception):
    """A read stopped by its guard, or at a size limit (`limit` set)."""

    def __init__(self, reason: StopReason | None, limit: int | None = None) -> None:
        super().__init__(reason or f"limit {limit}")
        self.reason = reason
        self.limit = limit


# `timer(at, callback)`: run `callback` at monotonic time `at`; calling what it returns cancels.
Timer = Callable[[float, Callable[[], None]], Callable[[], None]]


def _shutdown(sock: Any) -> None:  # a read blocked on it ends now
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
    """Stops one operation's reads. A response is unwatched (under the lock) before it is
    closed or handed back to the pool: a late alarm never touches someone else's."""

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
        """The flag for the check between chunks, and the socket shut down."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self.socket is not None:
                _shutdown(self.socket)


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
        """The error a call past its deadline raises."""
        return APITimeoutError(f"the deadline of {self.options.deadline:g} s passed")

    def timeouts(self) -> dict[str, float | None]:
        """The next attempt's timeouts, each cut to the time left (`APITimeoutError` if none is)."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.timed_out()
        phases = self.options.timeout.as_dict()
        if left == math.inf:
            return phases
        return {phase: left if s is None else min(s, left) for phase, s in phases.items()}

    def wait_between_events(self, request: httpx.Request) -> None:
        """From the head on, a chat stream's reads wait `idle_timeout`, cut to the time left.

        Called as the body's reading starts (`Halt` if the deadline has passed): httpcore
        reads the `timeout` extension then (HTTP/1.1) and on every read (HTTP/2).
        """
        left = self.at - time.monotonic()
        if left <= 0:
            raise Halt("deadline")
        idle = None if self.options.idle_timeout == math.inf else self.options.idle_timeout
        if left != math.inf:
            idle = left if idle is None else min(idle, left)
        request.extensions["timeout"] = {**request.extensions.get("timeout", {}), "read": idle}


class Lifecycle:
    """A client's open-or-closed state, shared with its `with_options` copies: `close()`
    stops every guard it tracks (weakly: a guard goes with its stream)."""

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

    def close(self) -> None:  # every operation still running is stopped
        with self._lock:
            self.closed = True
            guards = list(self._guards)
        for guard in guards:
            guard.stop("closed")


class _Watchdog:
    """One thread that runs every client's alarms at their time, from the first alarm to a
    minute without one.

    An alarm is a one-item list, its callback, in a heap; cancelling it empties the list
    (dropped once first, or when arming rebuilds a mostly cancelled heap). In a forked
    child the thread does not run, its lock may have been held at the fork, and the
    alarms are the parent's: the first alarm armed in another process starts over.
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

    def call_at(self, at: float, callback: Callable[[], None]) -> Callable[[], None]:
        if self._pid != os.getpid():  # a forked child: start over once, whatever the threads
            held = self._fork_lock.acquire(timeout=self.FORK_LOCK_WAIT)
            try:
                if self._pid != os.getpid():
                    self._start_over()
            finally:
                if held:
                    self._fork_lock.release()
                else:  # held by a thread of the parent when it forked: released nowhere here
                    self._fork_lock = threading.Lock()
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

    def _next(self) -> Callable[[], None] | None:  # None: idle long enough to end
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


thread_timer: Timer = _Watchdog().call_at  # every client's
