"""The options of a client and of one call, checked by one table; and `Call`, one operation.

- `RULES`: every option a client or a call takes, as a table (argument -> the
  values it accepts, read into what the SDK keeps -> the error otherwise), and
  `check(name, value)`, the one way in to it. The constructors, `with_options`,
  each call's options and `RetryPolicy` all go through it, so a bad value is a
  `ConfigurationError` when it is given, never a bare `ValueError` from deep
  inside httpx later.
- `base_url_from`, `token_from`: a client's two arguments that no table row
  fits (each may come from the environment), and `is_local`, whether plain
  http stays on this machine.
- `RequestOptions`: one call's options, the per-call keywords (its docstring is
  their table) checked and put over the client's settings, frozen; `Call`
  (`_deadline.py`) is the operation that runs with them.

The defaults are `DEFAULTS`, in `_wire.py`; the retry decisions, `_retries.py`.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from ._wire import DEFAULTS
from .citations import is_http_url
from .errors import ConfigurationError

__all__ = [
    "RULES",
    "Kind",
    "RequestOptions",
    "Rule",
    "base_url_from",
    "check",
    "is_local",
    "rules_table",
    "token_from",
]

Kind = Literal["chat", "get"]


# --------------------------------------------------------------------------- the table


class _Refused(Exception):
    """A reader's "no": the rule's error, or `f"{name}: {detail}"` when it says more."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within_clock(seconds: object) -> bool:
    """Whether a number of seconds is one a wait can be given: 0 to `max_seconds`, or inf."""
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


# The two text rows' readers see a `str` that can go out as UTF-8, or None: `check` makes
# sure first. None is the session id's "a new session"; a message has no such value.
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
    # A text row (the message, the session id): a value of another type than `str` (or
    # None) is a `TypeError`, as Python's own functions raise, not the `ConfigurationError`.
    type_error: bool = False


_SECONDS = f"must be a number of seconds above 0, at most {DEFAULTS.max_seconds:g} (math.inf: none)"
_BYTES = "must be a whole number of bytes above 0"
_HEADERS = "must be a mapping of header names to values"

# argument -> accepted values (read into what the SDK keeps) -> the error for any other.
# The constructors take every row; `with_options` and a call, those they have (None: the
# client's); `RetryPolicy` checks its own two.
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
    if rule.type_error and value is not None:  # text: a `str` that can go out as UTF-8
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


# ------------------------------------------------- a client's own: the base URL and the token


class _Token:
    """The bearer token, kept out of every repr and str."""

    __slots__ = ("header", "value")

    def __init__(self, value: str) -> None:
        self.value = value
        self.header = f"Bearer {value}"  # the `Authorization` header's value

    def __repr__(self) -> str:
        return "<token>"

    __str__ = __repr__


# What an HTTP header can carry as a bearer token: printable ASCII, no spaces. A
# token read from a file often ends in a newline, which httpx would refuse later
# with the whole header (the token) in its message.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


def token_from(token: object) -> _Token | None:
    """The token from `token`, else `SILVIA_TOKEN` (empty or unset: no token)."""
    env = DEFAULTS.token_env
    if token is None:
        value = os.environ.get(env, "")
        if not value:
            return None
        where = f"the {env} environment variable"
    elif not isinstance(token, str):
        raise ConfigurationError(f"token must be a str, not {type(token).__name__}")
    elif not token:
        raise ConfigurationError(f"token is empty: pass the token, or leave token out to use {env}")
    else:
        value, where = token, "token"
    if not _TOKEN_CHARS.fullmatch(value):
        # Never the value, nor where in it the bad character is.
        raise ConfigurationError(
            f"{where} holds whitespace, a control character or a non-ASCII character "
            "(a trailing newline from a file?): a bearer token is printable ASCII"
        )
    return _Token(value)


def base_url_from(base_url: object) -> str:
    """The API's base URL, checked: absolute http(s), no credentials, no query or fragment."""
    where, env = "base_url", DEFAULTS.base_url_env
    if base_url is None:
        base_url, where = os.environ.get(env), env
    if not base_url:
        raise ConfigurationError(
            f"no base URL: pass base_url=... or set the {env} environment variable"
        )
    if not isinstance(base_url, str):
        raise ConfigurationError(f"base_url must be a str, not {type(base_url).__name__}")
    if not is_http_url(base_url):
        raise ConfigurationError(f"{where} must be an absolute http(s) URL")
    parts = urlsplit(base_url)
    if "@" in parts.netloc:
        # httpx would send `user:password` as Basic auth in place of the token.
        raise ConfigurationError(
            f"{where} must not hold credentials (user:password@): "
            f"pass the token as token=... or in {DEFAULTS.token_env}"
        )
    if "?" in base_url or "#" in base_url:
        raise ConfigurationError(f"{where} must not have a query (?) or a fragment (#)")
    return base_url.rstrip("/")


def is_local(host: str) -> bool:
    """Whether plain http to `host` stays on this machine, or on a name that is never public."""
    host = host.rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".test")):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# ------------------------------------------------------------------------ one call's options


@dataclass(frozen=True)
class RequestOptions:
    """One call's options, checked, over the client's settings (`ClientBase._call`).

    The per-call keywords of `chat.stream`, `chat.send`, `sessions.get` and
    `sessions.get_raw` (a GET has no `idle_timeout` nor `max_event_bytes`),
    each None for the client's setting (see `SilviaClient`):

    - `extra_headers`: headers for this request only, over the client's
      `default_headers` (one of the same name, whatever its case, replaces it).
    - `extra_body` (a chat turn only): fields added to the turn's JSON body,
      over the client's (`with_options`); not the wire's message or session id.
    - `extra_query`: query parameters added to the URL, over the client's.
    - `timeout`: seconds for every phase, or an `httpx.Timeout`. Its read
      phase bounds the wait for the response's head and a session's body
      reads, per attempt.
    - `idle_timeout`: once a chat stream's head has come, the longest it may
      stay silent between events (keep-alive comments count; `math.inf`: none).
    - `deadline`: seconds for the whole operation: connecting, retries and
      the waits before them, every read (`math.inf`: none). None: the
      client's, else 600 for a chat turn and 120 for a GET.
    - `max_event_bytes`: the longest SSE line or event data, in bytes.
    - `max_response_bytes`: the most a history body, or a whole chat stream,
      may hold, counted after decompression.

    Each is checked (`RULES`) when the call is made, before anything is sent.
    """

    kind: Kind
    headers: httpx.Headers  # the client's, the call's, and the SDK's own
    timeout: httpx.Timeout
    idle_timeout: float
    deadline: float
    max_event_bytes: int
    max_response_bytes: int
    max_values: int  # the most JSON values and SSE events the call reads (`_json.most_values`)
    extra_body: Mapping[str, object]  # merged into a chat body
    extra_query: Mapping[str, str | int | float]  # on the URL

    @property
    def repeatable(self) -> bool:
        """Whether sending the request twice is safe: a GET is; a chat POST may run twice."""
        return self.kind == "get"
