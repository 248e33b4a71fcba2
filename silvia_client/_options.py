"""The settings of a client and of one call, checked; and `Call`, one operation's settings.

A client holds its settings as plain attributes (`timeout`, `idle_timeout`,
`deadline`, `max_event_bytes`, `max_response_bytes`, `retries`); a call's
keywords override them, `None` meaning "the client's". Every value is checked
here, so a bad one is a `ConfigurationError` when it is given (at
construction, in `with_options`, or when a call is made), never a bare
`ValueError` from deep inside httpx later.

`Call` is what one operation (a chat turn, a GET) runs with: its headers, its
timeouts, its limits, and once started, its `Deadline` and its `Guard`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import httpx

from ._deadline import Deadline, Guard, Timer
from .errors import APITimeoutError, ConfigurationError

__all__ = [
    "DEFAULT_CHAT_DEADLINE",
    "DEFAULT_GET_DEADLINE",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "Call",
    "Kind",
    "byte_limit",
    "check_text",
    "deadline_seconds",
    "headers_from",
    "positive_seconds",
    "retry_count",
    "timeout_from",
]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0)
# The longest silence a chat stream may keep before it counts as stalled. Keep-alive
# comments count as signs of life: that is what they are for.
DEFAULT_IDLE_TIMEOUT = 90.0
DEFAULT_MAX_RETRIES = 2
# A whole operation, retries and every read included: long enough for a turn with
# many tool calls, and for a GET that is retried twice.
DEFAULT_CHAT_DEADLINE = 600.0
DEFAULT_GET_DEADLINE = 120.0
# Far above any real turn: a guard against a server that never stops, not a quota.
DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024

Kind = Literal["chat", "get"]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def timeout_from(value: object, name: str = "timeout") -> httpx.Timeout:
    """Seconds (for every phase), an `httpx.Timeout`, or None (no timeouts)."""
    if isinstance(value, httpx.Timeout):
        timeout = value
    elif value is None or _is_number(value):
        timeout = httpx.Timeout(value)  # type: ignore[arg-type]
    else:
        raise ConfigurationError(f"{name} must be seconds, an httpx.Timeout or None")
    for phase, seconds in timeout.as_dict().items():
        if seconds is not None and not seconds >= 0:  # negative, or NaN
            raise ConfigurationError(f"{name}: the {phase} timeout must be 0 or more seconds")
    return timeout


def positive_seconds(value: object, name: str) -> float:
    """A number of seconds above 0; `math.inf` for none."""
    if not _is_number(value) or not value > 0:  # type: ignore[operator]
        raise ConfigurationError(f"{name} must be a number of seconds above 0 (math.inf: none)")
    return float(value)  # type: ignore[arg-type]


def deadline_seconds(value: object, name: str = "deadline") -> float | None:
    """A deadline in seconds (`math.inf`: none), or None for the defaults."""
    return None if value is None else positive_seconds(value, name)


def byte_limit(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigurationError(f"{name} must be a whole number of bytes above 0")
    return value


def retry_count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigurationError("max_retries must be a whole number, 0 or more")
    return value


def backoff_seconds(value: object) -> float:
    if not _is_number(value) or not 0 <= value < math.inf:  # type: ignore[operator]
        raise ConfigurationError("retry_backoff must be a number of seconds, 0 or more")
    return float(value)  # type: ignore[arg-type]


def headers_from(base: httpx.Headers, extra: object, name: str) -> httpx.Headers:
    """`base` with `extra` over it (a name's case does not matter)."""
    headers = base.copy()
    if extra is None:
        return headers
    if not isinstance(extra, Mapping):
        raise ConfigurationError(f"{name} must be a mapping of header names to values")
    # Checked here: httpx before 0.28 reads any other type with an AttributeError.
    if not all(isinstance(item, str | bytes) for pair in extra.items() for item in pair):
        raise ConfigurationError(f"{name}: header names and values must be str or bytes")
    try:
        headers.update(extra)
    except (TypeError, ValueError, UnicodeEncodeError) as error:
        raise ConfigurationError(f"{name}: {type(error).__name__}") from None
    return headers


def check_text(value: object, name: str, *, optional: bool = False) -> None:
    """A `str` that can go out as UTF-8: else TypeError or ValueError naming `name`."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(
            f"{name} cannot be encoded as UTF-8 (it holds a lone surrogate)"
        ) from None


class Call:
    """One operation's settings, and once `start`ed, its deadline and its guard."""

    __slots__ = (
        "deadline",
        "guard",
        "headers",
        "idle_timeout",
        "max_event_bytes",
        "max_response_bytes",
        "seconds",
        "timeout",
    )

    guard: Guard  # set by `start`

    def __init__(
        self,
        *,
        headers: httpx.Headers,
        timeout: httpx.Timeout,
        idle_timeout: float,
        seconds: float,
        max_event_bytes: int,
        max_response_bytes: int,
    ) -> None:
        self.headers = headers
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.seconds = seconds
        self.max_event_bytes = max_event_bytes
        self.max_response_bytes = max_response_bytes
        self.deadline = Deadline(math.inf)

    def start(self, timer: Timer) -> Guard:
        """Start the clock: the deadline runs from now, and the guard's alarm is set."""
        self.deadline = Deadline(self.seconds)
        self.guard = guard = Guard(timer)
        guard.arm(self.deadline.at, "deadline")
        return guard

    def expired(self) -> bool:
        return self.guard.reason == "deadline" or self.deadline.left() <= 0

    def timed_out(self) -> APITimeoutError:
        return APITimeoutError(f"the deadline of {self.seconds:g} s passed")

    def timeouts(self, read: float | None) -> dict[str, float | None]:
        """This attempt's timeouts: each cut to the time left (`APITimeoutError` if none is)."""
        left = self.deadline.left()
        if left <= 0:
            raise self.timed_out()
        phases = self.timeout.as_dict()
        phases["read"] = read
        if left == math.inf:
            return phases
        return {phase: left if s is None else min(s, left) for phase, s in phases.items()}
