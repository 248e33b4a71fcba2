"""Turning an HTTP response that is not what we asked for into a typed error.

Shared by the sync and async clients: they read the body (each its own way)
and hand it here. Messages are built from the status, the request id and the
server's own error text, never from the request, so no token can leak.
"""

from __future__ import annotations

import email.utils
import json
import re
import time

import httpx

from ._wire import WireFormat
from .errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    UnexpectedResponseError,
)

__all__ = [
    "BODY_PREVIEW_CHARS",
    "ERROR_BODY_MAX_BYTES",
    "connection_error",
    "is_event_stream",
    "parse_retry_after",
    "status_error",
    "undecodable",
    "unexpected_response",
]

ERROR_BODY_MAX_BYTES = 64 * 1024  # an error body longer than this is cut, not read whole
BODY_PREVIEW_CHARS = 200

_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


def request_id(response: httpx.Response, wire: WireFormat) -> str | None:
    value: str | None = response.headers.get(wire.request_id_header)
    return value


def parse_retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait (`Retry-After` as seconds or an HTTP date), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(seconds, 0.0)


# A body shown in an error may hold citation targets, and a target's provider is
# never shown (wire contract, Privacy): its value is blanked, even when cut short.
_PROVIDER_VALUE = re.compile(r'("provider"\s*:\s*)"(?:[^"\\]|\\.)*(?:"|\\?$)')


def _preview(body: bytes) -> str:
    text = body[: BODY_PREVIEW_CHARS * 4].decode("utf-8", errors="replace")
    text = _PROVIDER_VALUE.sub(r'\1"…"', text)
    text = " ".join(text.split())
    return text[:BODY_PREVIEW_CHARS] + ("…" if len(text) > BODY_PREVIEW_CHARS else "")


def _server_error(body: bytes, wire: WireFormat) -> tuple[str | None, str | None, object]:
    """(error type, message, parsed body) from `{"error": {...}}`, `{"error": "..."}` or text."""
    try:
        parsed: object = json.loads(body)
    except ValueError:
        return None, _preview(body) or None, body.decode("utf-8", errors="replace")
    error = parsed.get(wire.error_key) if isinstance(parsed, dict) else None
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        return (
            kind if isinstance(kind, str) else None,
            message if isinstance(message, str) else None,
            parsed,
        )
    if isinstance(error, str):
        return None, error, parsed
    if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        return None, parsed["message"], parsed
    return None, None, parsed


def status_error(response: httpx.Response, body: bytes, wire: WireFormat) -> APIStatusError:
    """The typed error for a non-2xx response whose (possibly cut) body is `body`."""
    status = response.status_code
    error_type, message, parsed = _server_error(body, wire)
    text = message or response.reason_phrase or "error"
    rid = request_id(response, wire)
    if status == 429:
        return RateLimitError(
            text,
            status_code=status,
            request_id=rid,
            error_type=error_type,
            body=parsed,
            retry_after=parse_retry_after(response),
        )
    cls = _STATUS_ERRORS.get(status)
    if cls is None:
        cls = InternalServerError if status >= 500 else APIStatusError
    return cls(text, status_code=status, request_id=rid, error_type=error_type, body=parsed)


def is_event_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    media_type = content_type.partition(";")[0].strip().lower()
    return media_type == "text/event-stream"


def unexpected_response(
    response: httpx.Response, body: bytes, wire: WireFormat, expected: str
) -> UnexpectedResponseError:
    content_type = response.headers.get("content-type", "no content type")
    return UnexpectedResponseError(
        f"expected {expected}, got {response.status_code} {content_type}: {_preview(body)!r}",
        status_code=response.status_code,
        request_id=request_id(response, wire),
    )


def undecodable(response: httpx.Response, wire: WireFormat) -> UnexpectedResponseError:
    """A 2xx body that its Content-Encoding belies."""
    encoding = response.headers.get("content-encoding", "")
    return unexpected_response(response, b"", wire, f"a body that decodes as {encoding!r}")


def connection_error(error: httpx.TransportError) -> APIConnectionError:
    if isinstance(error, httpx.TimeoutException):
        return APITimeoutError(f"timed out: {type(error).__name__}")
    return APIConnectionError(f"connection failed: {type(error).__name__}: {error}")
