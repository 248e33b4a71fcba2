"""`client.sessions`: a session's history (`get`), or its body as sent (`get_raw`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._options import check_text
from ._history import Session, session_from, session_path

if TYPE_CHECKING:
    import httpx

    from .._client import AsyncSilviaClient, SilviaClient

__all__ = ["AsyncSessions", "Sessions"]


class Sessions:
    """`client.sessions`: a session's history (`get`), or its body as sent (`get_raw`).

    GETs are retried on connection errors, 408, 429 and 5xx, within the
    deadline. Every keyword after the id is per call: None means "the
    client's setting"; `math.inf` as `deadline` means none.
    """

    def __init__(self, client: SilviaClient) -> None:
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
        response, body = self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return session_from(response, body, session_id, self._client._errors)

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
        _, body = self._fetch(session_id, extra_headers, timeout, deadline, max_response_bytes)
        return body

    def _fetch(
        self,
        session_id: str,
        extra_headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
        deadline: float | None,
        max_response_bytes: int | None,
    ) -> tuple[httpx.Response, bytes]:
        client = self._client
        check_text(session_id, "session_id")
        path = session_path(session_id, client.wire)
        call = client._call(
            "get",
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        return client._fetch(path, call)


class AsyncSessions:
    """The async twin of `Sessions`."""

    def __init__(self, client: AsyncSilviaClient) -> None:
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
        response, body = await self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return session_from(response, body, session_id, self._client._errors)

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
        _, body = await self._fetch(
            session_id, extra_headers, timeout, deadline, max_response_bytes
        )
        return body

    async def _fetch(
        self,
        session_id: str,
        extra_headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
        deadline: float | None,
        max_response_bytes: int | None,
    ) -> tuple[httpx.Response, bytes]:
        client = self._client
        check_text(session_id, "session_id")
        path = session_path(session_id, client.wire)
        call = client._call(
            "get",
            extra_headers=extra_headers,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        return await client._fetch(path, call)
