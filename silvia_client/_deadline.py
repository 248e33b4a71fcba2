"""One call: its options, checked by one table; its deadline; the one way to end a blocked read.

- `RULES` and `check`: every option a client or a call takes (argument -> the values
  it accepts -> the error otherwise), checked when given: a `ConfigurationError` then,
  never a `ValueError` from inside httpx later. `RequestOptions`: one call's, frozen.
- `Call`: one operation (a chat turn, a GET): its options, and once started its
  deadline, its `Guard` and its spans. The deadline bounds connecting, every retry and
  the wait before it, and every read (each cut to the time left).
- `Guard`: a read already waiting keeps the timeout it began with, and closing its
  response from another thread does not wake it; shutting its socket down does. So the
  deadline's alarm, a `close()` from elsewhere, or a drain that takes too long stops
  the guard: `reason` is set (readers check it between chunks) and the watched
  response's socket is shut down. `Lifecycle`: what a client's `close()` stops.
- `thread_timer`: one watchdog thread per process runs every client's alarms, sync or
  async: an alarm only sets a flag and shuts a socket down, safe from any thread.
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
from typing import TYPE_CHECKING, Any, Literal

import httpx

from ._wire import DEFAULTS
from .errors import APITimeoutError, ConfigurationError

if TYPE_CHECKING:
    from ._tracing import Operation


logger = logging.getLogger("silvia_client")

StopReason = Literal["deadline", "closed", "drained"]

Kind = Literal["chat", "get"]


# --------------------------------------------------------------------------- the table


class _Refused(Exception):
    """A reader's "no": the rule's error, or `f"{name}: {detail}"` when it says more."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within_clock(seconds: object) -> bool:  # 0 to `max_seconds`, or inf
    return seconds == math.inf or 0 <= seconds <= DEFAULTS.max_seconds  # type: ignore[operator]


def _timeout(value: object) -> httpx.Timeout:
    """Seconds for every phase, an `httpx.Timeout`, or None (none); a phase above 0, at most 1e9."""
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


def _seconds_above_0(value: object) -> float:
    """A number of seconds above 0 and at most 1e9; `math.inf` for none."""
    if not _is_number(value) or not value > 0 or not _within_clock(value):  # type: ignore[operator]
        raise _Refused
    return float(value)  # type: ignore[arg-type]


def _deadline(value: object) -> float | None:
    """Seconds above 0 and at most 1e9 (`math.inf`: none), or None for the defaults."""
    return None if value is None else _seconds_above_0(value)


def _seconds_0_or_more(value: object) -> float:
    """A finite number of seconds, 0 to 1e9."""
    if not _is_number(value) or value == math.inf or not _within_clock(value):
        raise _Refused
    return float(value)  # type: ignore[arg-type]


def _message(value: str | None) -> str:
    """A `str` with more than whitespace in it ([default]), that can go out as UTF-8."""
    if value is None:
        raise TypeError("message must be a str, not NoneType")
    if DEFAULTS.refuse_blank_message and not value.strip():
        raise _Refused
    return value


def _session_id(value: str | None) -> str | None:
    """None (a new session, for a chat turn), or a `str` that is not empty, UTF-8-encodable."""
    if value == "":
        raise _Refused
    return value


def _whole_above_0(value: object) -> int:
    """A whole number (an `int`, not a bool) above 0."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise _Refused
    return value


def _whole_0_or_more(value: object) -> int:
    """A whole number (an `int`, not a bool), 0 or more."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Refused
    return value


def _tracer_provider(value: object) -> object:
    """None (no tracing), or an OpenTelemetry `TracerProvider` (what has `get_tracer`)."""
    if value is not None and not callable(getattr(value, "get_tracer", None)):
        raise _Refused
    return value


def _flag(value: object) -> bool:
    """True or False (not a truthy value of another type)."""
    if not isinstance(value, bool):
        raise _Refused
    return value


def _headers(value: object) -> httpx.Headers:
    """A mapping of header names to values, each str or bytes; None for none."""
    if value is None:
        return httpx.Headers()
    if not isinstance(value, Mapping):
        raise _Refused
    # Checked here: httpx before 0.28 reads any other type with an AttributeError.
    if not all(isinstance(item, str | bytes) for pair in value.items() for item in pair):
        raise _Refused("header names and values must be str or bytes")
    try:
        return httpx.Headers(value)
    except (TypeError, ValueError, UnicodeEncodeError) as error:
        raise _Refused(type(error).__name__) from None


def _extra_body(value: object) -> dict[str, Any]:
    """A mapping of field names (`str`) to values JSON can carry, merged into a chat turn's
    JSON body; None for none."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise _Refused
    try:
        json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError) as error:  # a set, an object, NaN, a circle
        raise _Refused(f"cannot be sent as JSON ({type(error).__name__})") from None
    return dict(value)


_QUERY_VALUE = (str, int, float)


def _extra_query(value: object) -> dict[str, Any]:
    """A mapping of query parameter names (`str`) to values (a `str`, an `int` or a
    `float`, not a bool), added to the request's URL; None for none."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Refused
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(item, bool) or not isinstance(item, _QUERY_VALUE):
            raise _Refused
    return dict(value)


@dataclass(frozen=True)
class Rule:
    """One argument's row: `read` gives the value as the SDK keeps it, or refuses it."""

    read: Callable[[Any], Any]  # what is accepted (its docstring says it in words)
    error: str  # the `ConfigurationError` for what it refuses
    # A text row: another type than `str` (or None) is a `TypeError`, as Python's own
    # functions raise, and `read` gets a `str` that can go out as UTF-8.
    type_error: bool = False


_SECONDS = f"must be a number of seconds above 0, at most {DEFAULTS.max_seconds:g} (math.inf: none)"
_BYTES = "must be a whole number of bytes above 0"
_HEADERS = "must be a mapping of header names to values"

# The constructors take every row; `with_options` and a call, those they have.
RULES: Mapping[str, Rule] = {
    "timeout": Rule(_timeout, "timeout must be seconds, an httpx.Timeout or None"),
    "idle_timeout": Rule(_seconds_above_0, f"idle_timeout {_SECONDS}"),
    "deadline": Rule(_deadline, f"deadline {_SECONDS}"),
    "max_event_bytes": Rule(_whole_above_0, f"max_event_bytes {_BYTES}"),
    "max_response_bytes": Rule(_whole_above_0, f"max_response_bytes {_BYTES}"),
    "max_retries": Rule(_whole_0_or_more, "max_retries must be a whole number, 0 or more"),
    "retry_backoff": Rule(
        _seconds_0_or_more,
        f"retry_backoff must be a number of seconds, 0 to {DEFAULTS.max_seconds:g}",
    ),
    "message": Rule(_message, "message must not be empty or only whitespace", type_error=True),
    "session_id": Rule(
        _session_id, "session_id must not be empty (leave it out for a new session)", True
    ),
    "tracer_provider": Rule(
        _tracer_provider, "tracer_provider must be an OpenTelemetry TracerProvider"
    ),
    "propagate_context": Rule(_flag, "propagate_context must be True or False"),
    "default_headers": Rule(_headers, f"default_headers {_HEADERS}"),
    "extra_headers": Rule(_headers, f"extra_headers {_HEADERS}"),
    "extra_body": Rule(
        _extra_body, "extra_body must be a mapping of field names (str) to JSON values"
    ),
    "extra_query": Rule(
        _extra_query, "extra_query must be a mapping of parameter names (str) to str, int or float"
    ),
}


def rules_table() -> str:
    """`RULES` as the Markdown table the docs show: argument, what it accepts, the error."""
    rows = ["| argument | accepts | otherwise |", "| --- | --- | --- |"]
    for name, rule in RULES.items():
        accepts = " ".join((rule.read.__doc__ or "").split())
        otherwise = "`TypeError` for another type; else " if rule.type_error else ""
        rows.append(f"| `{name}` | {accepts} | {otherwise}`ConfigurationError`: {rule.error} |")
    return "\n".join(rows)


def check(name: str, value: object) -> Any:
    """`value` as the SDK keeps it, if `RULES[name]` accepts it; else `ConfigurationError`."""
    rule = RULES[name]
    if rule.type_error and value is not None:
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
    """One call's options, checked (`RULES`) before anything is sent, over the client's.

    The per-call keywords of `chat.stream`, `chat.send`, `sessions.get` and
    `sessions.get_raw` (a GET has no `idle_timeout` nor `max_event_bytes`), each
    None for the client's setting (`SilviaClient` says what each means):

    - `extra_headers`: headers for this request only, over the client's
      `default_headers` (one of the same name, whatever its case, replaces it).
    - `extra_body` (a chat turn only): fields added to the turn's JSON body, over
      the client's; not the wire's message or session id.
    - `extra_query`: query parameters added to the URL, over the client's.
    - `timeout`, `idle_timeout`, `deadline`, `max_event_bytes`, `max_response_bytes`.
    """

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


# ------------------------------------------------------------------------ the deadline


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


# ------------------------------------------------------------------------------ the clients' timer


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

    def _forked(self) -> None:  # start over once, however many threads arrive here
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
