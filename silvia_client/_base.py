"""What both clients share that does no I/O: `ClientBase`, `ResponseErrors`, `what_failed`.

Where things are: `ClientBase` checks what a client is given (the base URL, the
token and every setting, by `_options.py`), makes `with_options` copies,
puts a call's options over its own into a `Call` (`_deadline.py`) and builds
requests. `ResponseErrors` turns a response that is not what was asked for, or
a transport error, into a typed error: messages come from the status, the
request id and the server's own error text, never from the request, and
everything the server sent goes through the client's `Scrubber` first
(`_text.py`), so a server that echoes the token cannot make an error show it.

The clients that send are written once, async, in `_async/_client.py`
(`AsyncSilviaClient`), and generated from it in `_sync/_client.py`
(`SilviaClient`) by `tools/unasync.py`.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import re
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from ._deadline import Call, Halt, Lifecycle
from ._options import Kind, RequestOptions, base_url_from, check, is_local, token_from
from ._pool import Pool
from ._retries import RetryPolicy, parse_retry_after
from ._text import Scrubber, protect_library_logs
from ._version import __version__
from ._wire import DEFAULTS, WireFormat
from .errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ClientClosedError,
    ConfigurationError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    ResponseTooLargeError,
    SilviaError,
    UnexpectedResponseError,
    UnprocessableEntityError,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._tracing import Tracing

__all__ = ["ClientBase", "ResponseErrors", "what_failed"]

logger = logging.getLogger("silvia_client")


# ------------------------------------------------------------------- responses into errors

_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: RequestTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


# A body shown in an error may hold citation targets, and a target's provider is
# never shown (wire contract, Privacy): its value is blanked, even when cut short.
_PROVIDER_VALUE = re.compile(r'("provider"\s*:\s*)"(?:[^"\\]|\\.)*(?:"|\\?$)')


def _preview(body: bytes) -> str:
    chars = DEFAULTS.body_preview_chars
    text = body[: chars * 4].decode("utf-8", errors="replace")  # 4: UTF-8's longest character
    text = _PROVIDER_VALUE.sub(r'\1"…"', text)
    text = " ".join(text.split())
    return text[:chars] + ("…" if len(text) > chars else "")


class ResponseErrors:
    """One client's way of turning responses into errors: its wire format and its scrubber.

    `token_sent` says whether the client sends a token: a 401 without one says
    how to give it.
    """

    __slots__ = ("scrub", "token_sent", "wire")

    def __init__(self, wire: WireFormat, scrub: Scrubber, *, token_sent: bool) -> None:
        self.wire: WireFormat = wire
        self.scrub: Scrubber = scrub
        self.token_sent: bool = token_sent

    def request_id(self, response: httpx.Response) -> str | None:
        """The server's id for the request (scrubbed), if it sent one."""
        value: str | None = response.headers.get(self.wire.request_id_header)
        return None if value is None else self.scrub.text(value)

    def _server_error(self, body: bytes) -> tuple[str | None, str | None, object]:
        """(error type, message, parsed body) of `{"error": {...}}`, `{"error": "..."}` or text."""
        body = self.scrub.bytes(body)
        try:
            parsed: object = json.loads(body)
        except (ValueError, RecursionError):
            return None, _preview(body) or None, body.decode("utf-8", errors="replace")
        parsed = self.scrub.value(parsed)
        error = parsed.get(self.wire.error_key) if isinstance(parsed, dict) else None
        if isinstance(error, str):
            return None, error, parsed
        if not isinstance(error, dict):  # a top-level `message`, if any
            error = {"message": parsed.get("message")} if isinstance(parsed, dict) else {}
        kind, message = error.get("type"), error.get("message")
        return (
            kind if isinstance(kind, str) else None,
            message if isinstance(message, str) else None,
            parsed,
        )

    def status_error(self, response: httpx.Response, body: bytes) -> APIStatusError:
        """The typed error for a non-2xx response whose (possibly cut) body is `body`."""
        status = response.status_code
        error_type, message, parsed = self._server_error(body)
        text = self.scrub.text(message or response.reason_phrase or "error")
        if status == 401 and not self.token_sent:
            text += f" (no token was sent: set {DEFAULTS.token_env}, or pass token=...)"
        cls = _STATUS_ERRORS.get(status, InternalServerError if status >= 500 else APIStatusError)
        error = cls(
            text,
            status_code=status,
            request_id=self.request_id(response),
            error_type=self.scrub.optional(error_type),
            body=parsed,
            response=self._kept(response, body),
        )
        if isinstance(error, RateLimitError):
            error.retry_after = parse_retry_after(response)
        return error

    def _kept(self, response: httpx.Response, body: bytes) -> httpx.Response:
        """A new, read response holding what an error keeps: the status, the headers and
        the (bounded) body, the token blanked in each; its request only the method and
        the URL without its query, so no header sent (`Authorization`) is held."""
        blank = self.scrub.blank
        headers = httpx.Headers(
            [(blank(name), blank(value)) for name, value in response.headers.multi_items()]
        )
        url = response.request.url.copy_with(query=None, fragment=None)
        kept = httpx.Response(
            response.status_code,
            content=self.scrub.bytes(body),
            request=httpx.Request(response.request.method, blank(str(url))),
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )
        # After building: the body is decoded already, so a `Content-Encoding` given to
        # the constructor would have it decoded again.
        kept.headers = headers
        return kept

    def unexpected(
        self, response: httpx.Response, body: bytes, expected: str
    ) -> UnexpectedResponseError:
        """A 2xx whose body is not `expected`; the message shows the start of the body."""
        content_type = self.scrub.optional(response.headers.get("content-type"))
        preview = _preview(self.scrub.bytes(body))
        shown = content_type or "no content type"
        message = f"expected {expected}, got {response.status_code} {shown}: {preview!r}"
        return UnexpectedResponseError(
            self.scrub.text(message),
            status_code=response.status_code,
            request_id=self.request_id(response),
            content_type=content_type,
        )

    def undecodable(
        self, response: httpx.Response, why: str | None = None
    ) -> UnexpectedResponseError:
        """A 2xx body that its Content-Encoding belies, or in one the SDK cannot decode (`why`)."""
        if why is not None:
            return UnexpectedResponseError(
                self.scrub.text(why),
                status_code=response.status_code,
                request_id=self.request_id(response),
                content_type=self.scrub.optional(response.headers.get("content-type")),
            )
        encoding = response.headers.get("content-encoding", "")
        return self.unexpected(response, b"", f"a body that decodes as {encoding!r}")

    def connection_error(self, error: httpx.TransportError, url: httpx.URL) -> APIConnectionError:
        """The SDK's error for a transport error (whose text may quote the server), caused by it.

        It names where it was going, `scheme://host:port`: never the path or the query
        (a session id), nor any userinfo.
        """
        self.scrub.exception(error)
        port = url.port or {"http": 80, "https": 443}.get(url.scheme)
        where = f"{url.scheme}://{url.host}:{port}"
        if isinstance(error, httpx.TimeoutException):
            failure: APIConnectionError = APITimeoutError(
                f"timed out: {type(error).__name__} ({where})"
            )
        else:
            reason = _system_reason(error)
            failure = APIConnectionError(
                self.scrub.text(f"connection to {where} failed: {type(error).__name__}: {reason}")
            )
        failure.__cause__ = error
        return failure


def _system_reason(error: BaseException) -> str:
    """Why a connection failed, in the operating system's words, the same for both clients.

    httpx's sync and async transports word one refusal differently ("[Errno 111]
    Connection refused" against "All connection attempts failed"); the `OSError`
    at the bottom of the chain is the same, so its `errno` is what is said. A
    failure with no such error keeps httpx's words.
    """
    reason, seen = str(error), set[int]()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror) and cause.strerror:
            reason = cause.strerror  # a name that did not resolve
        elif isinstance(cause, OSError) and cause.errno is not None and cause.errno > 0:
            reason = os.strerror(cause.errno)
        cause = cause.__cause__ or cause.__context__
    return reason


# ------------------------------------------------------------------------------ the client


class ClientBase:
    """Configuration, the token and requests, shared by the sync and async clients.

    The settings are plain attributes, checked: `timeout`, `idle_timeout`,
    `deadline`, `max_event_bytes`, `max_response_bytes` and `retries`; and
    `extra_body`, `extra_query`, empty but in a `with_options` copy.
    """

    base_url: str
    wire: WireFormat
    retries: RetryPolicy
    _pool: Pool[httpx.Client] | Pool[httpx.AsyncClient]  # shared with `with_options` copies

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
        self.base_url = base_url_from(base_url)
        self._token = token_from(token)
        self._life = Lifecycle()  # shared with `with_options` copies: one pool, one state
        self._copy = False
        self._scrub = Scrubber(self._token.value if self._token is not None else None)
        if self._scrub:
            protect_library_logs()
        if not isinstance(wire, WireFormat):
            raise ConfigurationError("wire must be a WireFormat")
        self.wire = wire
        self._errors = ResponseErrors(wire, self._scrub, token_sent=self._token is not None)
        provider = check("tracer_provider", tracer_provider)
        propagate = check("propagate_context", propagate_context)
        self._tracing: Tracing | None = None  # off without a provider
        if provider is not None:
            from ._tracing import Tracing  # here: tracing off, nothing of it is imported

            request_id, scrub = self._errors.request_id, self._scrub.optional
            self._tracing = Tracing(provider, propagate, request_id, scrub, wire.session_path)
        elif propagate:
            raise ConfigurationError(
                "propagate_context=True needs a tracer_provider (for the global one, "
                "pass opentelemetry.trace.get_tracer_provider())"
            )
        self.timeout: httpx.Timeout = check("timeout", timeout)
        self.idle_timeout: float = check("idle_timeout", idle_timeout)
        self.deadline: float | None = check("deadline", deadline)
        self.max_event_bytes: int = check("max_event_bytes", max_event_bytes)
        self.max_response_bytes: int = check("max_response_bytes", max_response_bytes)
        self.retries = RetryPolicy(max_retries=max_retries, initial_delay=retry_backoff)
        self.extra_body: dict[str, object] = {}  # `with_options` defaults, under a call's
        self.extra_query: dict[str, str | int | float] = {}
        # httpx.Headers, not a dict: header names are case-insensitive, so a caller's
        # "User-Agent" replaces ours instead of going out beside it.
        self._headers = httpx.Headers({"user-agent": f"silvia-client/{__version__}"})
        self._headers.update(check("default_headers", default_headers))
        host = urlsplit(self.base_url).hostname or ""
        if self._token is not None and self.base_url.startswith("http:") and not is_local(host):
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
        extra_body: Mapping[str, object] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
    ) -> Self:
        """A copy of this client with other settings, sharing its connection pool.

        Each keyword left out (or None) keeps this client's setting;
        `default_headers`, `extra_body` and `extra_query` are added to this
        client's (a call's own replace them, key by key). The copy never closes
        the pool: closing it, or leaving a `with` block on it, leaves the pool
        to this client (and to whoever owns this client's `http_client`).
        """
        keywords = {
            "timeout": timeout,
            "idle_timeout": idle_timeout,
            "deadline": deadline,
            "max_event_bytes": max_event_bytes,
            "max_response_bytes": max_response_bytes,
            "default_headers": default_headers,
            "extra_body": extra_body,
            "extra_query": extra_query,
        }
        given = {name: check(name, value) for name, value in keywords.items() if value is not None}
        self._refuse_reserved(given.get("extra_body", {}))
        other = copy.copy(self)
        other._headers = self._headers.copy()
        other._headers.update(given.pop("default_headers", {}))
        other.extra_body = {**self.extra_body, **given.pop("extra_body", {})}
        other.extra_query = {**self.extra_query, **given.pop("extra_query", {})}
        vars(other).update(given)  # each setting given replaces the copy's
        if max_retries is not None:
            other.retries = dataclasses.replace(self.retries, max_retries=max_retries)
        other._copy = True
        other._bind()
        return other

    def _call(self, kind: Kind, **keywords: object) -> Call:
        """One operation, with the call's options (each None: the client's) checked and put
        over the client's settings, into one `RequestOptions`."""
        if self._life.closed:
            raise ClientClosedError(f"this {type(self).__name__} is closed: make a new one")
        given = {name: check(name, value) for name, value in keywords.items() if value is not None}
        extra_body = {**self.extra_body, **given.get("extra_body", {})}
        if extra_body:
            self._refuse_reserved(extra_body)
        headers = self._headers.copy()
        headers.update(given.get("extra_headers", {}))
        headers["accept"] = "text/event-stream" if kind == "chat" else "application/json"
        headers.setdefault("accept-encoding", DEFAULTS.accept_encoding)  # what `_body` decodes
        if kind == "chat":
            headers["cache-control"] = "no-store"
        if self._token is not None:
            headers["authorization"] = self._token.header
        seconds = given.get("deadline", self.deadline)
        if seconds is None:
            seconds = DEFAULTS.chat_deadline if kind == "chat" else DEFAULTS.get_deadline
        max_response_bytes = given.get("max_response_bytes", self.max_response_bytes)
        options = RequestOptions(
            kind,
            headers=headers,
            timeout=given.get("timeout", self.timeout),
            idle_timeout=given.get("idle_timeout", self.idle_timeout),
            deadline=seconds,
            max_event_bytes=given.get("max_event_bytes", self.max_event_bytes),
            max_response_bytes=max_response_bytes,
            # See `DEFAULTS.bytes_per_value`.
            max_values=max(max_response_bytes // DEFAULTS.bytes_per_value, DEFAULTS.min_values),
            extra_body=extra_body if kind == "chat" else {},
            extra_query={**self.extra_query, **given.get("extra_query", {})},
        )
        return Call(options)

    def _refuse_reserved(self, extra_body: Mapping[str, object]) -> None:
        """`ConfigurationError` for a field of `extra_body` the SDK sets itself."""
        reserved = {self.wire.message_field, self.wire.session_id_field}
        if clash := sorted(reserved.intersection(extra_body)):
            raise ConfigurationError(
                f"extra_body must not set {', '.join(map(repr, clash))}: the SDK sets it "
                "(pass the message, or session_id=)"
            )

    def _chat_request(
        self,
        client: httpx.Client | httpx.AsyncClient,
        message: str,
        session_id: str | None,
        call: Call,
    ) -> httpx.Request:
        wire = self.wire
        options = call.options
        body: dict[str, object] = {**options.extra_body, wire.message_field: message}
        if session_id is not None:
            body[wire.session_id_field] = session_id
        return client.build_request(
            "POST",
            self.base_url + wire.chat_path,
            json=body,
            headers=options.headers,
            params=options.extra_query or None,
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
        return client.build_request(
            "GET", url, headers=call.options.headers, params=call.options.extra_query or None
        )

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
        return self._pool.owned

    def _unusable(self, error: RuntimeError, pool_closed: bool) -> RuntimeError | ClientClosedError:
        """httpx's `RuntimeError` for a closed pool, as the SDK's error. (A call from another
        event loop never gets here: `Pool.get` refuses it before anything is sent.)"""
        if pool_closed:
            return ClientClosedError("the connection pool is closed: make a new client")
        return error

    def _log_response(self, request: httpx.Request, response: httpx.Response) -> None:
        logger.debug(
            "%s %s -> %d (request id %s)",
            request.method,
            request.url.path,
            response.status_code,
            self._errors.request_id(response),
        )


def what_failed(error: SilviaError) -> str:
    """What a retry is after, for the log: a status, or the transport error's kind."""
    if isinstance(error, APIStatusError):
        return str(error.status_code)
    return type(error.__cause__ or error).__name__
