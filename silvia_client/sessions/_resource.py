"""`client.sessions`, sync and async: `get` and `get_raw`.

A resource takes from its client only what `SessionsClient` (`AsyncSessionsClient`)
names, so it imports neither the client nor its configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from .._options import RequestOptions, check
from ._history import Session, session_from, session_path

if TYPE_CHECKING:
    import httpx

    from .._options import Call, Kind
    from .._responses import ResponseErrors
    from .._wire import WireFormat


class _Client(Protocol):
    """What both resources need of their client; each adds its own `_fetch`."""

    @property
    def wire(self) -> WireFormat: ...

    @property
    def _errors(self) -> ResponseErrors: ...

    def _call(self, kind: Kind, options: RequestOptions) -> Call: ...


class SessionsClient(_Client, Protocol):
    """What `Sessions` needs of its client (a `SilviaClient` is one)."""

    def _fetch(self, path: str, call: Call) -> tuple[httpx.Response, bytes]: ...


class AsyncSessionsClient(_Client, Protocol):
    """What `AsyncSessions` needs of its client (an `AsyncSilviaClient` is one)."""

    async def _fetch(self, path: str, call: Call) -> tuple[httpx.Response, bytes]: ...


def _request(client: _Client, session_id: str, options: RequestOptions) -> tuple[str, Call]:
    # The GET's path and settings, both checked before anything is sent.
    if check("session_id", session_id) is None:
        raise TypeError("session_id must be a str, not NoneType")
    return session_path(session_id, client.wire), client._call("get", options)


class Sessions:
    """`client.sessions`: a session's history (`get`), or its body as sent (`get_raw`).

    GETs are retried on connection errors, 408, 429 and 5xx, within the
    deadline. The keywords after the id are this call's options, each None
    for the client's setting; their table is `RequestOptions`'s (in
    `silvia_client._options`).
    """

    def __init__(self, client: SessionsClient) -> None:
        self._client = client

    def get(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> Session:
        """The session's history, its citations read as a live turn's are."""
        options = RequestOptions(
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        path, call = _request(self._client, session_id, options)
        response, body = self._client._fetch(path, call)
        return session_from(response, body, session_id, self._client._errors, call)

    def get_raw(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> bytes:
        """The session's body exactly as the server sent it (decompressed), for tools that
        judge the wire; `parse_session(json.loads(body), session_id)` reads it as `get` does."""
        options = RequestOptions(
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        path, call = _request(self._client, session_id, options)
        _, body = self._client._fetch(path, call)
        return body


class AsyncSessions:
    """The async twin of `Sessions`."""

    def __init__(self, client: AsyncSessionsClient) -> None:
        self._client = client

    async def get(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> Session:
        """The session's history, its citations read as a live turn's are."""
        options = RequestOptions(
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        path, call = _request(self._client, session_id, options)
        response, body = await self._client._fetch(path, call)
        return session_from(response, body, session_id, self._client._errors, call)

    async def get_raw(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> bytes:
        """The session's body exactly as the server sent it (see `Sessions.get_raw`)."""
        options = RequestOptions(
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        path, call = _request(self._client, session_id, options)
        _, body = await self._client._fetch(path, call)
        return body
