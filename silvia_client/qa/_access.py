"""When a server cannot be used at all: it refused the credentials, or could not be reached.

A QA run that meets either before any prompt has completed stops (exit status
3): every other prompt would fail the same way, and a wall of rule failures
would hide the one line that matters. `access_failure(error)` says whether a
chat request's error is such a failure; the observer puts it on the
observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx

from ..errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    PermissionDeniedError,
    SilviaError,
)
from ._privacy import redact_text

__all__ = ["AccessFailure", "access_failure"]


@dataclass(frozen=True)
class AccessFailure:
    """Why a server could not be used: `refused` (401, 403) or `unreachable`.

    `message` is one line naming the cause and the request id (or saying
    there was none); it never holds the token.
    """

    kind: Literal["refused", "unreachable"]
    message: str
    request_id: str | None = None


def _request(request_id: str | None) -> str:
    return f"request id {request_id}" if request_id else "no request id"


def access_failure(error: SilviaError, *, request_id: str | None = None) -> AccessFailure | None:
    """The access failure a chat request's `error` amounts to, or None for any other error."""
    if isinstance(error, (AuthenticationError, PermissionDeniedError)):
        request_id = error.request_id or request_id
        kind = f" {error.error_type}" if error.error_type else ""
        hint = "check SILVIA_TOKEN" if isinstance(error, AuthenticationError) else "check access"
        return AccessFailure(
            "refused",
            redact_text(
                f"the server refused the credentials (HTTP {error.status_code}{kind}, "
                f"{_request(request_id)}); {hint}"
            ),
            request_id,
        )
    cause = error.__cause__ if error.__cause__ is not None else error
    if isinstance(error, APITimeoutError) and not isinstance(cause, httpx.ConnectTimeout):
        return None  # connected, then no answer in time: reachable, and a finding
    if isinstance(error, APIConnectionError):
        return AccessFailure(
            "unreachable",
            f"cannot reach the server ({type(cause).__name__}, {_request(request_id)})",
            request_id,
        )
    return None
