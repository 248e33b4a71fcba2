"""`SilviaClient` and `AsyncSilviaClient`: sending, reading, retrying.

Everything the twins share that is not I/O (configuration, the token, building
requests) is `ClientBase`, in `_config.py`; turning a response that is not what
was asked for into a typed error is `_responses.py`. Here each twin sends in its
own way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

import httpx

from ._config import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    ClientBase,
    logger,
)
from ._responses import ERROR_BODY_MAX_BYTES, is_event_stream
from ._wire import DEFAULT_WIRE, WireFormat

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


class SilviaClient(ClientBase):
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
                response = self._http.send(request, stream=True, follow_redirects=False)
                self._log_response(request, response)
                if read and response.is_success:
                    try:
                        response.read()
                    except httpx.DecodingError as error:  # a body its Content-Encoding belies
                        raise self._errors.undecodable(response) from error
                    finally:
                        response.close()
            except httpx.TransportError as error:
                delay = self.retries.delay_after_error(error, attempt, repeatable=repeatable)
                if delay is None:
                    raise self._errors.connection_error(error) from error
                logger.info("retrying %s after %s", request.url.path, type(error).__name__)
            else:
                if response.is_success:
                    return response
                body = _read_at_most(response, ERROR_BODY_MAX_BYTES)
                delay = self.retries.delay_after_status(response, attempt) if repeatable else None
                if delay is None:
                    raise self._errors.status_error(response, body)
                logger.info("retrying %s after %d", request.url.path, response.status_code)
            time.sleep(delay)
            attempt += 1

    def _open_chat(self, message: str, session_id: str | None) -> httpx.Response:
        response = self._send(self._chat_request(self._http, message, session_id), repeatable=False)
        if not is_event_stream(response):
            body = _read_at_most(response, ERROR_BODY_MAX_BYTES)
            raise self._errors.unexpected(response, body, "text/event-stream")
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


class AsyncSilviaClient(ClientBase):
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
                response = await self._http.send(request, stream=True, follow_redirects=False)
                self._log_response(request, response)
                if read and response.is_success:
                    try:
                        await response.aread()
                    except httpx.DecodingError as error:
                        raise self._errors.undecodable(response) from error
                    finally:
                        await response.aclose()
            except httpx.TransportError as error:
                delay = self.retries.delay_after_error(error, attempt, repeatable=repeatable)
                if delay is None:
                    raise self._errors.connection_error(error) from error
                logger.info("retrying %s after %s", request.url.path, type(error).__name__)
            else:
                if response.is_success:
                    return response
                body = await _aread_at_most(response, ERROR_BODY_MAX_BYTES)
                delay = self.retries.delay_after_status(response, attempt) if repeatable else None
                if delay is None:
                    raise self._errors.status_error(response, body)
                logger.info("retrying %s after %d", request.url.path, response.status_code)
            import asyncio  # here, not at the top: `import silvia_client` stays without it

            await asyncio.sleep(delay)
            attempt += 1

    async def _open_chat(self, message: str, session_id: str | None) -> httpx.Response:
        request = self._chat_request(self._http, message, session_id)
        response = await self._send(request, repeatable=False)
        if not is_event_stream(response):
            body = await _aread_at_most(response, ERROR_BODY_MAX_BYTES)
            raise self._errors.unexpected(response, body, "text/event-stream")
        return response

    async def _get_json_bytes(self, path: str) -> tuple[httpx.Response, bytes]:
        request = self._get_request(self._http, path)
        response = await self._send(request, repeatable=True, read=True)
        return response, response.content
