"""What `SilviaClient` and `AsyncSilviaClient` share: configuration, the token, requests.

Nothing here does I/O: the twins in `_client.py` send, each in its own way.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx

from ._responses import ResponseErrors
from ._retries import RetryPolicy
from ._scrub import Scrubber, protect_library_logs
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


# What an HTTP header can carry as a bearer token: printable ASCII, no spaces. A
# token read from a file often ends in a newline, which httpx would refuse later
# with the whole header (the token) in its message.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


def _token_from(token: object) -> _Token | None:
    """The token from `token`, else `SILVIA_TOKEN` (empty or unset: no token)."""
    if token is None:
        value = os.environ.get(TOKEN_ENV, "")
        if not value:
            return None
        where = f"the {TOKEN_ENV} environment variable"
    elif not isinstance(token, str):
        raise ConfigurationError(f"token must be a str, not {type(token).__name__}")
    elif not token:
        raise ConfigurationError(
            f"token is empty: pass the token, or leave token out to use {TOKEN_ENV}"
        )
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
    where = "base_url"
    if base_url is None:
        base_url, where = os.environ.get(BASE_URL_ENV), BASE_URL_ENV
    if not base_url:
        raise ConfigurationError(
            f"no base URL: pass base_url=... or set the {BASE_URL_ENV} environment variable"
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
            f"pass the token as token=... or in {TOKEN_ENV}"
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
        self.base_url = _base_url_from(base_url)
        self._token = _token_from(token)
        self._scrub = self._token.scrubber() if self._token is not None else Scrubber(None)
        if self._scrub:
            protect_library_logs()
        if idle_timeout <= 0:
            raise ConfigurationError("idle_timeout must be positive")
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.idle_timeout = idle_timeout
        self.retries = RetryPolicy(max_retries=max_retries, initial_delay=retry_backoff)
        self.wire = wire
        self._errors = ResponseErrors(wire, self._scrub, token_sent=self._token is not None)
        # httpx.Headers, not a dict: header names are case-insensitive, so a caller's
        # "User-Agent" replaces ours instead of going out beside it.
        self._headers = httpx.Headers({"user-agent": f"silvia-client/{__version__}"})
        self._headers.update(default_headers or {})
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
            self._errors.request_id(response),
        )
