"""What `SilviaClient` and `AsyncSilviaClient` share: configuration, the token, requests.

Nothing here does I/O: the twins in `_client.py` send, each in its own way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import httpx

from ._responses import request_id
from ._retries import RetryPolicy
from ._scrub import Scrubber
from ._version import __version__
from ._wire import WireFormat
from .citations import is_http_url
from .errors import ConfigurationError

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "TOKEN_ENV",
    "ClientBase",
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

    def scrubber(self) -> Scrubber:
        return Scrubber(self._value)

    def __repr__(self) -> str:
        return "<token>"

    __str__ = __repr__


class ClientBase:
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
        self._scrub = self._token.scrubber() if self._token is not None else Scrubber(None)
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
