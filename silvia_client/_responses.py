"""Turning an HTTP response that is not what we asked for into a typed error.

Shared by the sync and async clients: they read the body (each its own way,
within a size bound) and hand it here. Messages are built from the status, the
request id and the server's own error text, never from the request; everything
the server sent goes through the client's `Scrubber` first (see `_text.py`),
so a server that echoes the token cannot make an error show it.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import re
import socket
import time

import httpx

from ._text import Scrubber
from ._wire import DEFAULTS, WireFormat
from .errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    UnexpectedResponseError,
    UnprocessableEntityError,
)

__all__ = ["ResponseErrors", "parse_retry_after"]

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


def parse_retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait (`Retry-After` as seconds or an HTTP date), or None.

    Always finite: from 0 to `DEFAULTS.retry_after_ceiling`.
    """
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), DEFAULTS.retry_after_ceiling)


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
