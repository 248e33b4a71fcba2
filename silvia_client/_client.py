"""`SilviaClient` and `AsyncSilviaClient`: configuration, auth, sending, retries.

The twins share everything that is not I/O (`_ClientBase`): configuration,
building requests, and the retry policy. Each then sends in its own way.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

import httpx

from ._responses import (
    ERROR_BODY_MAX_BYTES,
    is_event_stream,
    request_id,
    status_error,
    unexpected_response,
)
from ._retries import RetryPolicy
from ._version import __version__
from ._wire import DEFAULT_WIRE, WireFormat
from .citations import is_http_url
from .errors import (
    APIConnectionError,
    APITimeoutError,
    ConfigurationError,
    UnexpectedResponseError,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from .chat import AsyncChat, Chat
    from .sessions import AsyncSessions, Sessions

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "AsyncSilviaClient",
    "SilviaClient",
]

logger = logging.getLogger("silvia_client")

BASE_URL_ENV = "SILVIA_BASE_URL"
TOKEN_ENV = "SILVIA_TOKEN"
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0)
# The longest silence a chat stream may keep before it counts as stalled. Keep-alive
# comments count as signs of life: that is what they are for.
DEFAULT_IDLE_TIMEOUT = 90.0
DEFAULT_MAX_RETRIES = 2


class _Token:
    """The bearer token, kept out of every repr and str."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def header(self) -> str:
        return f"Bearer {self._value}"

    def scrub(self, body: bytes) -> bytes:
        """`body` with the token blanked, should a server echo it in an error."""
        value = self._value.encode("utf-8", errors="replace")
        # A very short token would blank ordinary text; real tokens are long.
        return body.replace(value, b"<token>") if len(value) >= 8 else body

    def __repr__(self) -> str:
        return "<token>"

    __str__ = __repr__


class _ClientBase:
    def __init__(
        self,
        *,
        base_url: str | None,
        token: str | None,
        timeout: float | httpx.Timeout | None,
        idle_timeout: float,
        max_retries: int,
        retry_backoff: float,
        default_headers: Mapping[str, str] | None,
        wire: WireFormat,
    ) -> None:
        base_url = base_url if base_url is not None else os.environ.get(BASE_URL_ENV)
        if not base_url:
            raise ConfigurationError(
                f"no base URL: pass base_url=... or set the {BASE_URL_ENV} environment variable"
            )
        if not is_http_url(base_url):
            raise ConfigurationError("base_url must be an absolute http(s) URL")
        if idle_timeout <= 0:
            raise ConfigurationError("idle_timeout must be positive")
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.base_url = base_url.rstrip("/")
        self._token = _Token(token) if token else None
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.idle_timeout = idle_timeout
        self.retries = RetryPolicy(max_retries=max_retries, initial_delay=retry_backoff)
        self.wire = wire
        # httpx.Headers, not a dict: header names are case-insensitive, so a caller's
        # "User-Agent" replaces ours instead of going out beside it.
        self._headers = httpx.Headers({"user-agent": f"silvia-client/{__version__}"})
        self._headers.update(default_headers or {})

    def __repr__(self) -> str:
        # Credentials written into the URL (`https://user:pass@host`) stay out too.
        scheme, _, rest = self.base_url.partition("://")
        authority, slash, path = rest.partition("/")
        public = f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
        return f"{type(self).__name__}(base_url={public!r})"

    def _scrubbed(self, body: bytes) -> bytes:
        return self._token.scrub(body) if self._token is not None else body

    def _headers_for(self, accept: str) -> httpx.Headers:
        headers = self._headers.copy()
        headers["accept"] = accept
        if self._token is not None:
            headers["authorization"] = self._token.header()
        return headers

    def _chat_request(
        self, client: httpx.Client | httpx.AsyncClient, message: str, session_id: str | None
    ) -> httpx.Request:
        wire = self.wire
        body: dict[str, str] = {wire.message_field: message}
        if session_id is not None:
            body[wire.session_id_field] = session_id
        # The read timeout of a stream is its idle timeout: the longest wait for
        # the next bytes, keep-alive comments included.
        timeout = httpx.Timeout(
            connect=self.timeout.connect,
            read=self.idle_timeout,
            write=self.timeout.write,
            pool=self.timeout.pool,
        )
        headers = self._headers_for("text/event-stream")
        headers["cache-control"] = "no-store"
        return client.build_request(
            "POST", self.base_url + wire.chat_path, json=body, headers=headers, timeout=timeout
        )

    def _get_request(self, client: httpx.Client | httpx.AsyncClient, path: str) -> httpx.Request:
        # The SDK's timeouts, even on a caller's own client (as for chat requests).
        return client.build_request(
            "GET",
            self.base_url + path,
            headers=self._headers_for("application/json"),
            timeout=self.timeout,
        )

    def _log_response(self, request: httpx.Request, response: httpx.Response) -> None:
        logger.debug(
            "%s %s -> %d (request id %s)",
            request.method,
            request.url.path,
            response.status_code,
            request_id(response, self.wire),
        )


def _undecodable(response: httpx.Response, wire: WireFormat) -> UnexpectedResponseError:
    encoding = response.headers.get("content-encoding", "")
    return unexpected_response(response, b"", wire, f"a body that decodes as {encoding!r}")


def _connection_error(error: httpx.TransportError) -> APIConnectionError:
    if isinstance(error, httpx.TimeoutException):
        return APITimeoutError(f"timed out: {type(error).__name__}")
    return APIConnectionError(f"connection failed: {type(error).__name__}: {error}")


class SilviaClient(_ClientBase):
    """A client for Silvia's chat API.

    `base_url` and `token` default to `SILVIA_BASE_URL` and `SILVIA_TOKEN`. Pass
    your own `http_client` to control transports, proxies or limits; it is then
    yours to close. Use it as a context manager, or call `close()`.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_backoff: float = 0.5,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        wire: WireFormat = DEFAULT_WIRE,
    ) -> None:
        super().__init__(
            base_url=base_url,
            token=token,
            timeout=timeout,
            idle_timeout=idle_timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            default_headers=default_headers,
            wire=wire,
        )
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=self.timeout)
        from .chat import Chat
        from .sessions import Sessions

        self.chat: Chat = Chat(self)
        self.sessions: Sessions = Sessions(self)

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

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
        self, request: httpx.Request, *, repeatable: bool, read: bool = False
    ) -> httpx.Response:
        """Send with retries; the response is 2xx, else an error is raised.

        The response is open (streamed), unless `read`: then its body is read, and
        the response closed, inside the retry loop, so that a body that breaks off
        is retried like a connection that failed.
        """
        attempt = 0
        while True:
            try:
                response = self._http.send(request, stream=True)
                self._log_response(request, response)
                if read and response.is_success:
                    try:
                        response.read()
                    except httpx.DecodingError as error:  # a body its Content-Encoding belies
                        raise _undecodable(response, self.wire) from error
                    finally:
                        response.close()
            except httpx.TransportError as error:
                delay = self.retries.delay_after_error(error, attempt, repeatable=repeatable)
                if delay is None:
                    raise _connection_error(error) from error
                logger.info("retrying %s after %s", request.url.path, type(error).__name__)
            else:
                if response.is_success:
                    return response
                body = _read_at_most(response, ERROR_BODY_MAX_BYTES)
                delay = self.retries.delay_after_status(response, attempt) if repeatable else None
                if delay is None:
                    raise status_error(response, self._scrubbed(body), self.wire)
                logger.info("retrying %s after %d", request.url.path, response.status_code)
            time.sleep(delay)
            attempt += 1

    def _open_chat(self, message: str, session_id: str | None) -> httpx.Response:
        response = self._send(self._chat_request(self._http, message, session_id), repeatable=False)
        if not is_event_stream(response):
            body = _read_at_most(response, ERROR_BODY_MAX_BYTES)
            raise unexpected_response(
                response, self._scrubbed(body), self.wire, "text/event-stream"
            )
        return response

    def _get_json_bytes(self, path: str) -> tuple[httpx.Response, bytes]:
        request = self._get_request(self._http, path)
        response = self._send(request, repeatable=True, read=True)
        return response, response.content


def _read_at_most(response: httpx.Response, limit: int) -> bytes:
    data = bytearray()
    try:
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.TransportError, httpx.DecodingError):
        pass  # what arrived is enough to describe the error
    finally:
        response.close()
    return bytes(data[:limit])


async def _aread_at_most(response: httpx.Response, limit: int) -> bytes:
    data = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.TransportError, httpx.DecodingError):
        pass  # what arrived is enough to describe the error
    finally:
        await response.aclose()
    return bytes(data[:limit])


class AsyncSilviaClient(_ClientBase):
    """The async twin of `SilviaClient`: same arguments, `await`/`async with`/`async for`."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_backoff: float = 0.5,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        wire: WireFormat = DEFAULT_WIRE,
    ) -> None:
        super().__init__(
            base_url=base_url,
            token=token,
            timeout=timeout,
            idle_timeout=idle_timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            default_headers=default_headers,
            wire=wire,
        )
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=self.timeout)
        from .chat import AsyncChat
        from .sessions import AsyncSessions

        self.chat: AsyncChat = AsyncChat(self)
        self.sessions: AsyncSessions = AsyncSessions(self)

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

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
        self, request: httpx.Request, *, repeatable: bool, read: bool = False
    ) -> httpx.Response:
        """Send with retries; the response is 2xx, else an error is raised (see the sync twin)."""
        attempt = 0
        while True:
            try:
                response = await self._http.send(request, stream=True)
                self._log_response(request, response)
                if read and response.is_success:
                    try:
                        await response.aread()
                    except httpx.DecodingError as error:
                        raise _undecodable(response, self.wire) from error
                    finally:
                        await response.aclose()
            except httpx.TransportError as error:
                delay = self.retries.delay_after_error(error, attempt, repeatable=repeatable)
                if delay is None:
                    raise _connection_error(error) from error
                logger.info("retrying %s after %s", request.url.path, type(error).__name__)
            else:
                if response.is_success:
                    return response
                body = await _aread_at_most(response, ERROR_BODY_MAX_BYTES)
                delay = self.retries.delay_after_status(response, attempt) if repeatable else None
                if delay is None:
                    raise status_error(response, self._scrubbed(body), self.wire)
                logger.info("retrying %s after %d", request.url.path, response.status_code)
            import asyncio  # here, not at the top: `import silvia_client` stays without it

            await asyncio.sleep(delay)
            attempt += 1

    async def _open_chat(self, message: str, session_id: str | None) -> httpx.Response:
        request = self._chat_request(self._http, message, session_id)
        response = await self._send(request, repeatable=False)
        if not is_event_stream(response):
            body = await _aread_at_most(response, ERROR_BODY_MAX_BYTES)
            raise unexpected_response(
                response, self._scrubbed(body), self.wire, "text/event-stream"
            )
        return response

    async def _get_json_bytes(self, path: str) -> tuple[httpx.Response, bytes]:
        request = self._get_request(self._http, path)
        response = await self._send(request, repeatable=True, read=True)
        return response, response.content
