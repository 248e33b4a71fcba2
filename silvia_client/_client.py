"""`SilviaClient` and `AsyncSilviaClient`: configuration, requests, and sending them.

Where things are: `ClientBase`, first, is what the twins share that does no
I/O: it checks what a client is given (the base URL, the token and every
setting, by `_options.py`), makes `with_options` copies, resolves a call's
`RequestOptions` into a `Call` (`_options.py`) and builds requests. The twins
below it send, each in its own way (send, classify, decide, sleep or raise),
mirroring each other line for line. The defaults are `DEFAULTS` (`_wire.py`);
whether and when to retry is `_retries.py`; a response that is not what was
asked for becomes a typed error in `_responses.py`; a body is read within its
limits by `_body.py`; the deadline's alarm and the guard that ends a blocked
read are `_deadline.py`; the spans, when a `tracer_provider` is given,
`_tracing.py`. Each twin reaches its connection pool only through `_http`, a
`Pool` (`_pool.py`): this process's (a forked child gets its own) and, for the
async twin, the first event loop's.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from ._body import aread_at_most, aread_body, encoding_error, read_at_most, read_body
from ._deadline import Guard, Halt, Lifecycle, Timer, loop_timer, thread_timer
from ._options import (
    Call,
    Kind,
    RequestOptions,
    base_url_from,
    check,
    checked,
    is_local,
    token_from,
)
from ._pool import BoundedCookieJar, Pool
from ._responses import ResponseErrors
from ._retries import Failure, RetryPolicy, after_failure
from ._text import Scrubber, protect_library_logs
from ._version import __version__
from ._wire import DEFAULT_WIRE, DEFAULTS, WireFormat
from .errors import (
    APIStatusError,
    ClientClosedError,
    ConfigurationError,
    ResponseTooLargeError,
    SilviaError,
)

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider
    from typing_extensions import Self

    from ._tracing import Tracing
    from .chat import AsyncChat, Chat
    from .sessions import AsyncSessions, Sessions

__all__ = ["AsyncSilviaClient", "ClientBase", "SilviaClient"]

logger = logging.getLogger("silvia_client")


class ClientBase:
    """Configuration, the token and requests, shared by the sync and async clients.

    The settings are plain attributes, checked: `timeout`, `idle_timeout`,
    `deadline`, `max_event_bytes`, `max_response_bytes` and `retries`.
    """

    base_url: str
    wire: WireFormat
    retries: RetryPolicy
    _timer: Timer  # how this twin runs a deadline's alarm
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
        other._copy = True
        other._bind()
        return other

    def _call(self, kind: Kind, options: RequestOptions) -> Call:
        """One operation's settings: the call's options over the client's, checked."""
        if self._life.closed:
            raise ClientClosedError(f"this {type(self).__name__} is closed: make a new one")
        given = checked(vars(options))
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
        return Call(
            kind,
            headers=headers,
            timeout=given.get("timeout", self.timeout),
            idle_timeout=given.get("idle_timeout", self.idle_timeout),
            seconds=seconds,
            max_event_bytes=given.get("max_event_bytes", self.max_event_bytes),
            max_response_bytes=max_response_bytes,
            # See `DEFAULTS.bytes_per_value`.
            max_values=max(max_response_bytes // DEFAULTS.bytes_per_value, DEFAULTS.min_values),
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


class SilviaClient(ClientBase):
    """A client for Silvia's chat API.

    Use it as a context manager, or call `close()`. `with_options(...)` gives
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
    - `http_client`: your own `httpx.Client`, for proxies, limits, transports
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

    _timer = staticmethod(thread_timer)

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
        http_client: httpx.Client | None = None,
        wire: WireFormat = DEFAULT_WIRE,
        tracer_provider: TracerProvider | None = None,
        propagate_context: bool = False,
    ) -> None:
        if http_client is not None and not isinstance(http_client, httpx.Client):
            raise ConfigurationError(
                "http_client must be an httpx.Client (AsyncSilviaClient takes an httpx.AsyncClient)"
            )
        super().__init__(
            base_url=base_url,
            token=token,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            default_headers=default_headers,
            wire=wire,
            tracer_provider=tracer_provider,
            propagate_context=propagate_context,
        )
        timeout = self.timeout
        self._pool: Pool[httpx.Client] = Pool(
            http_client,
            lambda: httpx.Client(timeout=timeout, cookies=BoundedCookieJar()),
            type(self).__name__,
        )
        self._bind()

    @property
    def _http(self) -> httpx.Client:
        """The connection pool, this process's and (async) the event loop's (`Pool.get`)."""
        return self._pool.get()

    def _bind(self) -> None:
        # Here, not at the top: `from silvia_client import SilviaClient` stays without the
        # stream's modules (httpx-sse, pydantic-core) until a client is made. The
        # resources do not import this module: they take what `ChatClient` names.
        from .chat import Chat
        from .sessions import Sessions

        self.chat: Chat = Chat(self)
        self.sessions: Sessions = Sessions(self)

    def close(self) -> None:
        """Close the client: every stream it opened ends, in any thread, and any call after
        raises `ClientClosedError`. The connection pool is closed if this client made it
        (not your own `http_client`). A `with_options` copy's `close()` does nothing."""
        if self._closing() and (http := self._pool.to_close()) is not None:
            http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _send(
        self, request: httpx.Request, call: Call, guard: Guard, *, read: bool = False
    ) -> tuple[httpx.Response, bytes]:
        """Send with retries, within the call's deadline; the response is 2xx, else an error.

        The response is open (streamed) and watched by the call's guard, unless
        `read`: then its body is read within the call's limits, and the response
        closed, inside the retry loop, so that a body that breaks off is retried
        like a connection that failed.
        """
        trace, attempt = call.trace, 0
        while True:
            request.extensions["timeout"] = call.timeouts()
            if trace is not None:
                trace.attempt(request, attempt)
            try:
                response = self._http.send(request, stream=True, follow_redirects=False)
                if logger.isEnabledFor(logging.DEBUG):  # only then: the line reads the request id
                    self._log_response(request, response)
                if trace is not None:
                    trace.response(response)
                guard.watch(response)
                if response.is_success:
                    return response, self._read(response, call, guard) if read else b""
                failure: Failure = response
                body = read_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                error: SilviaError = self._errors.status_error(response, body)
            except httpx.TransportError as broken:
                failure, error = broken, self._errors.connection_error(broken, request.url)
            except RuntimeError as refused:  # a closed pool, an ended event loop
                raise self._unusable(refused, self._http.is_closed) from refused
            guard.watch(None)
            if trace is not None:
                trace.failed(failure)
            step = after_failure(self.retries, call, failure, error, attempt)
            if isinstance(step, SilviaError):
                raise step
            logger.info("retrying %s after %s", request.url.path, _what(error))
            time.sleep(step)
            attempt += 1

    def _read(self, response: httpx.Response, call: Call, guard: Guard) -> bytes:
        try:
            return read_body(response, guard, call.max_response_bytes)
        except httpx.DecodingError as error:  # a body its Content-Encoding belies
            raise self._errors.undecodable(response, encoding_error(response)) from error
        except Halt as halt:
            raise self._halted(halt, response, call) from None
        finally:
            guard.watch(None)
            response.close()

    def _open_chat(self, message: str, session_id: str | None, call: Call) -> httpx.Response:
        guard = self._life.track(call.start(self._timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.kind)
        try:
            request = self._chat_request(self._http, message, session_id, call)
            response, _ = self._send(request, call, guard)
            media_type = response.headers.get("content-type", "").partition(";")[0]
            if media_type.strip().lower() != "text/event-stream":
                body = read_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                raise self._errors.unexpected(response, body, "text/event-stream")
            if (why := encoding_error(response)) is not None:
                response.close()
                raise self._errors.undecodable(response, why)
        except BaseException as error:
            guard.release()
            if call.trace is not None:
                call.trace.end(error)
            raise
        return response

    def _fetch(self, path: str, call: Call) -> tuple[httpx.Response, bytes]:
        guard = self._life.track(call.start(self._timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.kind, path)
        try:
            request = self._get_request(self._http, path, call)
            return self._send(request, call, guard, read=True)
        except BaseException as error:
            if call.trace is not None:
                call.trace.end(error)
            raise
        finally:
            guard.release()
            if call.trace is not None:
                call.trace.end()


class AsyncSilviaClient(ClientBase):
    """The async twin of `SilviaClient`: `await`, `async with`, `async for`.

    It takes `SilviaClient`'s arguments (see there for each), its `http_client`
    an `httpx.AsyncClient`. Use it as an async context manager, or `await
    close()`. `with_options(...)` gives a copy with other settings on the same
    connection pool.
    """

    _timer = staticmethod(loop_timer)

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
            raise ConfigurationError(
                "http_client must be an httpx.AsyncClient (SilviaClient takes an httpx.Client)"
            )
        super().__init__(
            base_url=base_url,
            token=token,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            default_headers=default_headers,
            wire=wire,
            tracer_provider=tracer_provider,
            propagate_context=propagate_context,
        )
        timeout = self.timeout
        self._pool: Pool[httpx.AsyncClient] = Pool(
            http_client,
            lambda: httpx.AsyncClient(timeout=timeout, cookies=BoundedCookieJar()),
            type(self).__name__,
        )
        self._bind()

    @property
    def _http(self) -> httpx.AsyncClient:
        return self._pool.get()

    def _bind(self) -> None:
        from .chat import AsyncChat
        from .sessions import AsyncSessions

        self.chat: AsyncChat = AsyncChat(self)
        self.sessions: AsyncSessions = AsyncSessions(self)

    async def close(self) -> None:
        """Close the client, as `SilviaClient.close` does (see there)."""
        if self._closing() and (http := self._pool.to_close()) is not None:
            await http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _send(
        self, request: httpx.Request, call: Call, guard: Guard, *, read: bool = False
    ) -> tuple[httpx.Response, bytes]:
        """Send with retries, within the call's deadline (see the sync twin)."""
        trace, attempt = call.trace, 0
        while True:
            request.extensions["timeout"] = call.timeouts()
            if trace is not None:
                trace.attempt(request, attempt)
            try:
                response = await self._http.send(request, stream=True, follow_redirects=False)
                if logger.isEnabledFor(logging.DEBUG):  # only then: the line reads the request id
                    self._log_response(request, response)
                if trace is not None:
                    trace.response(response)
                guard.watch(response)
                if response.is_success:
                    return response, await self._read(response, call, guard) if read else b""
                failure: Failure = response
                body = await aread_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                error: SilviaError = self._errors.status_error(response, body)
            except httpx.TransportError as broken:
                failure, error = broken, self._errors.connection_error(broken, request.url)
            except RuntimeError as refused:  # a closed pool, an ended event loop
                raise self._unusable(refused, self._http.is_closed) from refused
            guard.watch(None)
            if trace is not None:
                trace.failed(failure)
            step = after_failure(self.retries, call, failure, error, attempt)
            if isinstance(step, SilviaError):
                raise step
            logger.info("retrying %s after %s", request.url.path, _what(error))
            import asyncio  # here, not at the top: `import silvia_client` stays without it

            await asyncio.sleep(step)
            attempt += 1

    async def _read(self, response: httpx.Response, call: Call, guard: Guard) -> bytes:
        try:
            return await aread_body(response, guard, call.max_response_bytes)
        except httpx.DecodingError as error:  # a body its Content-Encoding belies
            raise self._errors.undecodable(response, encoding_error(response)) from error
        except Halt as halt:
            raise self._halted(halt, response, call) from None
        finally:
            guard.watch(None)
            await response.aclose()

    async def _open_chat(self, message: str, session_id: str | None, call: Call) -> httpx.Response:
        guard = self._life.track(call.start(self._timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.kind)
        try:
            request = self._chat_request(self._http, message, session_id, call)
            response, _ = await self._send(request, call, guard)
            media_type = response.headers.get("content-type", "").partition(";")[0]
            if media_type.strip().lower() != "text/event-stream":
                body = await aread_at_most(response, DEFAULTS.error_body_max_bytes, guard)
                raise self._errors.unexpected(response, body, "text/event-stream")
            if (why := encoding_error(response)) is not None:
                await response.aclose()
                raise self._errors.undecodable(response, why)
        except BaseException as error:
            guard.release()
            if call.trace is not None:
                call.trace.end(error)
            raise
        return response

    async def _fetch(self, path: str, call: Call) -> tuple[httpx.Response, bytes]:
        guard = self._life.track(call.start(self._timer))
        if self._tracing is not None:
            call.trace = self._tracing.start(call.kind, path)
        try:
            request = self._get_request(self._http, path, call)
            return await self._send(request, call, guard, read=True)
        except BaseException as error:
            if call.trace is not None:
                call.trace.end(error)
            raise
        finally:
            guard.release()
            if call.trace is not None:
                call.trace.end()


def _what(error: SilviaError) -> str:
    """What a retry is after, for the log: a status, or the transport error's kind."""
    if isinstance(error, APIStatusError):
        return str(error.status_code)
    return type(error.__cause__ or error).__name__
