"""`AsyncSilviaClient`: its settings, `with_options`, a call's options into one `Call`, and
sending, with retries (`_retries.py`), within the call's deadline.

`_sync/_client.py` is generated from this module; what it needs that does no I/O is in
`_base.py` (the token, the base URL, the scrubber, the pool, responses into errors).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import AsyncIterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from .._base import Pool, ResponseErrors, Scrubber, base_url_from, is_local, token_from
from .._deadline import Call, Guard, Halt, Kind, Lifecycle, RequestOptions, check, thread_timer
from .._retries import Failure, RetryPolicy, after_failure
from .._version import __version__
from .._wire import DEFAULT_WIRE, DEFAULTS, WireFormat
from ..errors import ClientClosedError, ConfigurationError, ResponseTooLargeError, SilviaError
from ._backend import OTHER_CLIENT, sleep
from ._body import body_chunks, encoding_error, read_at_most, read_body

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider
    from typing_extensions import Self

    from .._tracing import Tracing
    from ._sessions import AsyncSessions
    from ._stream import AsyncChat


logger = logging.getLogger("silvia_client")


class AsyncSilviaClient:
    """A client for Silvia's chat API, async.

    Use it as a context manager (`async with`), or call `await close()`. `with_options(...)` gives
    a copy with other settings on the same connection pool.

    Arguments (all keyword-only):

    - `base_url`: the API's base URL, an absolute http(s) URL without
      credentials, query or fragment. Default: the `SILVIA_BASE_URL`
      environment variable; without either, `ConfigurationError`.
    - `token`: the bearer token, printable ASCII without spaces. Default:
      `SILVIA_TOKEN`; when that is unset or empty, requests go without
      `Authorization`. `token=""` is a `ConfigurationError`. The token is
      blanked in whatever the server sends back, if it has 8 characters or
      more (a shorter one cannot be a secret).
    - `timeout`: per-request timeouts, as seconds for every phase, an
      `httpx.Timeout`, or None for none. Default: connect 10 s, read 60 s,
      write 30 s, pool 10 s. The read phase bounds the wait for a response's
      head, a chat turn's and a session's, and a session's body reads; each
      attempt gets its own (a session read is retried, a chat turn whose
      request went out is not).
    - `idle_timeout`: once a chat stream's head has come, the longest it may
      stay silent between events (keep-alive comments count as signs of
      life), in seconds. Default: 90.
    - `deadline`: seconds for a whole operation: connecting, retries, the
      waits before them, and every read. Default (None): 600 for a chat turn,
      120 for a GET; a number here applies to both; `math.inf` for none.
    - `max_event_bytes`: the longest SSE line or event data a chat stream
      accepts. Default: 16 MiB.
    - `max_response_bytes`: the most a history body, or a whole chat stream,
      may hold, counted after decompression. Default: 64 MiB. A call also reads at
      most `max_response_bytes // 32` JSON values and SSE events (10,000 at least).
    - `max_retries`: how many times a failed request is sent again (see
      the README's "Retries"). Default: 2.
    - `retry_backoff`: seconds before the first retry, doubled each time,
      with jitter. Default: 0.5.
    - `default_headers`: headers sent with every request.
    - `http_client`: your own `httpx.AsyncClient`, for proxies, limits, transports
      or event hooks. It stays yours to close; the SDK's timeouts, deadline and
      limits still apply, and redirects are never followed. Its cookies are
      yours too (the SDK's own pool keeps at most 50, 8 KiB in all). Used before
      a fork, it is refused in the child (`ClientClosedError`): make it, and the
      client, in each worker; the SDK's own pool is made anew in a forked child.
    - `wire`: the paths, event names and field names (`WireFormat`).
    - `tracer_provider`: an OpenTelemetry `TracerProvider` (the `otel` extra):
      a span per chat turn and session GET, and one per HTTP attempt under it
      (docs/tracing.md). Default (None): no tracing, and OpenTelemetry is not
      imported. `with_options` copies keep it.
    - `propagate_context`: send each attempt's trace context to the server (a
      `traceparent` header, by OpenTelemetry's propagators), so that its
      traces join yours. Needs `tracer_provider`. Default: False.
    """

    # Declared for the reference (set in `_bind`): an attribute needs a docstring to show.
    chat: AsyncChat
    """Chat turns: `chat.stream(message, ...)` gives an `AsyncChatStream`, `chat.send(...)`
    the `Turn`."""
    sessions: AsyncSessions
    """A session's history: `sessions.get(session_id, ...)` gives a `Session`."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULTS.timeout,
        idle_timeout: float = DEFAULTS.idle_timeout,
        deadline: float | None = None,
        max_event_bytes: int = DEFAULTS.max_event_bytes,
        max_response_bytes: int = DEFAULTS.max_response_bytes,
        max_retries: int = DEFAULTS.max_retries,
        retry_backoff: float = DEFAULTS.retry_backoff,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        wire: WireFormat = DEFAULT_WIRE,
        tracer_provider: TracerProvider | None = None,
        propagate_context: bool = False,
    ) -> None:
        if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
            raise ConfigurationError(f"http_client must be an httpx.AsyncClient ({OTHER_CLIENT})")
        self.base_url: str = base_url_from(base_url)
        self._token = token_from(token)
        self._life = Lifecycle()  # shared with `with_options` copies: one pool, one state
        self._copy = False
        if not isinstance(wire, WireFormat):
            raise ConfigurationError("wire must be a WireFormat")
        self.wire: WireFormat = wire
        scrub = Scrubber(None if self._token is None else self._token.value)
        self._errors = ResponseErrors(wire, scrub, token_sent=self._token is not None)
        provider = check("tracer_provider", tracer_provider)
        propagate = check("propagate_context", propagate_context)
        self._tracing: Tracing | None = None  # off without a provider
        if provider is not None:
            from .._tracing import Tracing  # here: tracing off, nothing of it is imported

            self._tracing = Tracing(provider, propagate, self._errors)
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
        self.retries: RetryPolicy = RetryPolicy(
            max_retries=max_retries, initial_delay=retry_backoff
        )
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
        self._pool: Pool[httpx.AsyncClient] = Pool(
            http_client, httpx.AsyncClient, self.timeout, type(self).__name__
        )
        self._bind()

    def _bind(self) -> None:
        # Here: `from silvia_client import SilviaClient` stays without httpx-sse and
        # pydantic-core until a client is made.
        from ._sessions import AsyncSessions
        from ._stream import AsyncChat

        self.chat = AsyncChat(self)
        self.sessions = AsyncSessions(self)

    def __repr__(self) -> str:  # a base URL holds no credentials (checked)
        return f"{type(self).__name__}(base_url={self.base_url!r})"

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
        """One operation: the call's options (None: the client's) checked, over the client's."""
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
            max_values=max(max_response_bytes // DEFAULTS.bytes_per_value, DEFAULTS.min_values),
            extra_body=extra_body if kind == "chat" else {},
            extra_query={**self.extra_query, **given.get("extra_query", {})},
        )
        return Call(options)

    def _refuse_reserved(self, extra_body: Mapping[str, object]) -> None:
        reserved = {self.wire.message_field, self.wire.session_id_field}
        if clash := sorted(reserved.intersection(extra_body)):
            raise ConfigurationError(
                f"extra_body must not set {', '.join(map(repr, clash))}: the SDK sets it "
                "(pass the message, or session_id=)"
            )

    async def close(self) -> None:
        """Close the client: every stream it opened ends, in any thread, and any call after
        raises `ClientClosedError`. The connection pool is closed if this client made it
        (not your own `http_client`). A `with_options` copy's `close()` does nothing."""
        if self._copy:  # the pool and the state are the original's
            return
        self._life.close()
        if (http := self._pool.to_close()) is not None:
            await http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _send(
        self, request: httpx.Request, call: Call, guard: Guard, *, read: bool = False
    ) -> tuple[httpx.Response, bytes]:
        """Send with retries, within the call's deadline; the response is 2xx, else an error.

        The response is open and watched by the call's guard, unless `read`: then its
        body is read and the response closed inside the retry loop, so that a body
        that breaks off is retried like a connection that failed.
        """
        trace, attempt = call.trace, 0
        while True:
            request.extensions["timeout"] = call.timeouts()
            if trace is not None:
                trace.attempt(request, attempt)
            http = self._pool.get()
            try:
                response = await http.send(request, stream=True, follow_redirects=False)
                if logger.isEnabledFor(logging.DEBUG):  # only then: it reads the request id
                    what = (request.method, request.url.path, response.status_code)
                    request_id = self._errors.request_id(response)
                    logger.debug("%s %s -> %d (request id %s)", *what, request_id)
                if trace is not None:
                    trace.response(response)
                guard.watch(response)
                if response.is_success:
                    return response, await self._read(response, call, guard) if read else b""
                failure: Failure = response
                body = await read_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                error: SilviaError = self._errors.status_error(response, body)
            except httpx.TransportError as broken:
                failure, error = broken, self._errors.connection_error(broken, request.url)
            except RuntimeError as refused:  # a closed pool, an ended event loop
                if http.is_closed:
                    message = "the connection pool is closed: make a new client"
                    raise ClientClosedError(message) from refused
                raise
            guard.watch(None)
            if trace is not None:
                trace.failed(failure)
            step = after_failure(self.retries, call, failure, error, attempt)
            if isinstance(step, SilviaError):
                raise step
            after = getattr(failure, "status_code", type(failure).__name__)
            logger.info("retrying %s after %s", request.url.path, after)
            await sleep(step)
            attempt += 1

    async def _read(self, response: httpx.Response, call: Call, guard: Guard) -> bytes:
        try:
            return await read_body(response, guard, call.options.max_response_bytes)
        except httpx.DecodingError as error:  # a body its Content-Encoding belies
            raise self._errors.undecodable(response, encoding_error(response)) from error
        except Halt as halt:  # the guard stopped, or the size limit
            if halt.reason == "closed":
                message = "the client was closed while the request was under way"
                raise ClientClosedError(message) from None
            if halt.limit is None:
                raise call.timed_out() from None
            raise ResponseTooLargeError(
                f"the body is longer than max_response_bytes ({halt.limit:,} bytes)",
                limit=halt.limit,
                request_id=self._errors.request_id(response),
            ) from None
        finally:
            guard.watch(None)
            await response.aclose()

    async def _open_chat(
        self, message: str, session_id: str | None, call: Call
    ) -> tuple[httpx.Response, AsyncIterable[bytes]]:
        guard = self._life.track(call.start(thread_timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.options.kind)
        try:
            wire, options = self.wire, call.options
            fields: dict[str, object] = {**options.extra_body, wire.message_field: message}
            if session_id is not None:
                fields[wire.session_id_field] = session_id
            request = self._pool.get().build_request(
                "POST",
                self.base_url + wire.chat_path,
                json=fields,
                headers=options.headers,
                params=options.extra_query or None,
            )
            response, _ = await self._send(request, call, guard)
            media_type = response.headers.get("content-type", "").partition(";")[0]
            if media_type.strip().lower() != "text/event-stream":
                start = await read_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                raise self._errors.unexpected(response, start, "text/event-stream")
            try:
                body = body_chunks(response)
            except httpx.DecodingError as error:  # an encoding the SDK does not decode
                await response.aclose()
                raise self._errors.undecodable(response, str(error)) from None
        except BaseException as error:
            guard.release()
            if call.trace is not None:
                call.trace.end(error)
            raise
        return response, body

    async def _fetch(self, path: str, call: Call) -> tuple[httpx.Response, bytes]:
        guard = self._life.track(call.start(thread_timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.options.kind, path)
        try:
            url = self.base_url + path
            if len(url) > DEFAULTS.max_url_chars:  # httpx would refuse it with its own error
                raise ConfigurationError(
                    f"the session's URL would be {len(url):,} characters, past the "
                    f"{DEFAULTS.max_url_chars:,} a URL may hold: the session id is too long"
                )
            options = call.options
            request = self._pool.get().build_request(
                "GET", url, headers=options.headers, params=options.extra_query or None
            )
            return await self._send(request, call, guard, read=True)
        except BaseException as error:
            if call.trace is not None:
                call.trace.end(error)
            raise
        finally:
            guard.release()
            if call.trace is not None:
                call.trace.end()
