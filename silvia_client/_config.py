"""What `SilviaClient` and `AsyncSilviaClient` share: configuration, the token, requests.

`ClientBase` checks what the client is given (the base URL, the token, and the
settings, by `_options.RULES`), makes `with_options` copies, resolves a call's
`RequestOptions` against the client's settings into a `Call`, and builds
requests. Nothing here does I/O: the twins in `_client.py` send, each in its
own way. The defaults, the environment variables' names included, are
`DEFAULTS` (`_wire.py`).
"""

from __future__ import annotations

import copy
import dataclasses
import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from ._deadline import Halt, Lifecycle, Timer
from ._options import Call, Kind, RequestOptions, check, checked
from ._responses import ResponseErrors
from ._retries import RetryPolicy
from ._scrub import Scrubber, protect_library_logs
from ._tracing import tracing_for
from ._version import __version__
from ._wire import DEFAULTS, WireFormat
from .citations import is_http_url
from .errors import ClientClosedError, ConfigurationError, ResponseTooLargeError, SilviaError

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ClientBase"]

logger = logging.getLogger("silvia_client")


class _Token:
    """The bearer token, kept out of every repr and str."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def header(self) -> str:
        return f"Bearer {self._value}"

    def scrubber(self) -> Scrubber:
        return Scrubber(self._value)

    def __repr__(self) -> str:
        return "<token>"

    __str__ = __repr__


# What an HTTP header can carry as a bearer token: printable ASCII, no spaces. A
# token read from a file often ends in a newline, which httpx would refuse later
# with the whole header (the token) in its message.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


def _token_from(token: object) -> _Token | None:
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


def _base_url_from(base_url: object) -> str:
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


def _is_local(host: str) -> bool:
    """Whether plain http to `host` stays on this machine, or on a name that is never public."""
    host = host.rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".test")):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ClientBase:
    """Configuration, the token and requests, shared by the sync and async clients.

    The settings are plain attributes, checked: `timeout`, `idle_timeout`,
    `deadline`, `max_event_bytes`, `max_response_bytes` and `retries`.
    """

    base_url: str
    wire: WireFormat
    retries: RetryPolicy
    _timer: Timer  # how this twin runs a deadline's alarm
    _owns_http: bool

    def __init__(
        self,
        *,
        base_url: str | None,
        token: str | None,
        timeout: float | httpx.Timeout | None,
        idle_timeout: float,
        deadline: float | None,
        max_event_bytes: int,
        max_response_bytes: int,
        max_retries: int,
        retry_backoff: float,
        default_headers: Mapping[str, str] | None,
        wire: WireFormat,
        tracer_provider: object = None,
        propagate_context: bool = False,
    ) -> None:
        self.base_url = _base_url_from(base_url)
        self._token = _token_from(token)
        self._life = Lifecycle()  # shared with `with_options` copies: one pool, one state
        self._copy = False
        self._scrub = self._token.scrubber() if self._token is not None else Scrubber(None)
        if self._scrub:
            protect_library_logs()
        if not isinstance(wire, WireFormat):
            raise ConfigurationError("wire must be a WireFormat")
        self.wire = wire
        self._errors = ResponseErrors(wire, self._scrub, token_sent=self._token is not None)
        self._tracing = tracing_for(  # off (and OpenTelemetry not imported) without a provider
            check("tracer_provider", tracer_provider),
            check("propagate_context", propagate_context),
            request_id=self._errors.request_id,
            scrub=self._scrub.optional,
            session_path=wire.session_path,
        )
        self.timeout: httpx.Timeout = check("timeout", timeout)
        self.idle_timeout: float = check("idle_timeout", idle_timeout)
        self.deadline: float | None = check("deadline", deadline)
        self.max_event_bytes: int = check("max_event_bytes", max_event_bytes)
        self.max_response_bytes: int = check("max_response_bytes", max_response_bytes)
        self.retries = RetryPolicy(max_retries=max_retries, initial_delay=retry_backoff)
        # httpx.Headers, not a dict: header names are case-insensitive, so a caller's
        # "User-Agent" replaces ours instead of going out beside it.
        self._headers = httpx.Headers({"user-agent": f"silvia-client/{__version__}"})
        self._headers.update(check("default_headers", default_headers))
        host = urlsplit(self.base_url).hostname or ""
        if self._token is not None and self.base_url.startswith("http:") and not _is_local(host):
            logger.warning(
                "%s: the token goes over plain http to %s; use https unless a trusted "
                "proxy sits in between",
                type(self).__name__,
                host,
            )

    def __repr__(self) -> str:
        # A base URL holds no credentials (checked above), so it can be shown.
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def _bind(self) -> None:
        """Make the resources (`chat`, `sessions`) of this client."""
        raise NotImplementedError

    def with_options(
        self,
        *,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int | None = None,
        default_headers: Mapping[str, str] | None = None,
        deadline: float | None = None,
        idle_timeout: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> Self:
        """A copy of this client with other settings, sharing its connection pool.

        Each keyword left out (or None) keeps this client's setting;
        `default_headers` are added to this client's. The copy never closes
        the pool: closing it, or leaving a `with` block on it, leaves the pool
        to this client (and to whoever owns this client's `http_client`).
        """
        given = checked(
            {
                "timeout": timeout,
                "idle_timeout": idle_timeout,
                "deadline": deadline,
                "max_event_bytes": max_event_bytes,
                "max_response_bytes": max_response_bytes,
                "default_headers": default_headers,
            }
        )
        other = copy.copy(self)
        other._headers = self._headers.copy()
        other._headers.update(given.pop("default_headers", {}))
        vars(other).update(given)  # each setting given replaces the copy's
        if max_retries is not None:
            other.retries = dataclasses.replace(self.retries, max_retries=max_retries)
        other._owns_http = False
        other._copy = True
        other._bind()
        return other

    def _call(self, kind: Kind, options: RequestOptions) -> Call:
        """One operation's settings: the call's options over the client's, checked."""
        if self._life.closed:
            raise ClientClosedError(f"this {type(self).__name__} is closed: make a new one")
        given = options.checked()
        headers = self._headers.copy()
        headers.update(given.get("extra_headers", {}))
        headers["accept"] = "text/event-stream" if kind == "chat" else "application/json"
        headers.setdefault("accept-encoding", DEFAULTS.accept_encoding)  # what `_body` decodes
        if kind == "chat":
            headers["cache-control"] = "no-store"
        if self._token is not None:
            headers["authorization"] = self._token.header()
        seconds = given.get("deadline", self.deadline)
        if seconds is None:
            seconds = DEFAULTS.chat_deadline if kind == "chat" else DEFAULTS.get_deadline
        return Call(
            kind,
            headers=headers,
            timeout=given.get("timeout", self.timeout),
            idle_timeout=given.get("idle_timeout", self.idle_timeout),
            seconds=seconds,
            max_event_bytes=given.get("max_event_bytes", self.max_event_bytes),
            max_response_bytes=given.get("max_response_bytes", self.max_response_bytes),
        )

    def _chat_request(
        self,
        client: httpx.Client | httpx.AsyncClient,
        message: str,
        session_id: str | None,
        call: Call,
    ) -> httpx.Request:
        wire = self.wire
        body: dict[str, str] = {wire.message_field: message}
        if session_id is not None:
            body[wire.session_id_field] = session_id
        return client.build_request(
            "POST", self.base_url + wire.chat_path, json=body, headers=call.headers
        )

    def _get_request(
        self, client: httpx.Client | httpx.AsyncClient, path: str, call: Call
    ) -> httpx.Request:
        url = self.base_url + path
        if len(url) > DEFAULTS.max_url_chars:  # httpx would refuse it with its own error
            raise ConfigurationError(
                f"the session's URL would be {len(url):,} characters, past the "
                f"{DEFAULTS.max_url_chars:,} a URL may hold: the session id is too long"
            )
        return client.build_request("GET", url, headers=call.headers)

    def _halted(self, halt: Halt, response: httpx.Response, call: Call) -> SilviaError:
        """The error for a body read that its guard, or its size limit, stopped."""
        if halt.reason == "closed":
            return ClientClosedError("the client was closed while the request was under way")
        if halt.limit is not None:
            return ResponseTooLargeError(
                f"the body is longer than max_response_bytes ({halt.limit:,} bytes)",
                limit=halt.limit,
                request_id=self._errors.request_id(response),
            )
        return call.timed_out()

    def _closing(self) -> bool:
        """Close this client's state (not a copy's), stopping every operation it runs.

        Whether the caller should then close the connection pool too.
        """
        if self._copy:  # a copy never closes: the pool and the state are the original's
            return False
        self._life.close()
        return self._owns_http

    def _unusable(self, error: RuntimeError) -> RuntimeError | ClientClosedError:
        """httpx's `RuntimeError` for a closed pool or an ended event loop, as the SDK's error."""
        if self._http_closed():
            return ClientClosedError("the connection pool is closed: make a new client")
        if "Event loop is closed" in str(error):
            return ClientClosedError(
                f"this {type(self).__name__}'s connections belong to an event loop that has "
                "ended: an async client serves one event loop (make one inside each asyncio.run)"
            )
        return error

    def _http_closed(self) -> bool:
        raise NotImplementedError

    def _log_response(self, request: httpx.Request, response: httpx.Response) -> None:
        if not logger.isEnabledFor(logging.DEBUG):  # the id is read (and scrubbed) for the log
            return
        logger.debug(
            "%s %s -> %d (request id %s)",
            request.method,
            request.url.path,
            response.status_code,
            self._errors.request_id(response),
        )
