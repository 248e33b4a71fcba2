"""`client.sessions`: `get` and `get_raw`; `_sync/` is generated from it (`tools/unasync.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._deadline import Call, check
from ..sessions._history import Session, session_from, session_path

if TYPE_CHECKING:
    import httpx

    from ._client import AsyncSilviaClient


def _request(client: AsyncSilviaClient, session_id: str, **options: object) -> tuple[str, Call]:
    if check("session_id", session_id) is None:
        raise TypeError("session_id must be a str, not NoneType")
    return session_path(session_id, client.wire), client._call("get", **options)


class AsyncSessions:
    """`client.sessions`: a session's history (`get`), or its body as sent (`get_raw`).

    GETs are retried on connection errors, 408, 429 and 5xx, within the deadline. The keywords
    after the id are this call's options, None for the client's (`_deadline.RequestOptions`).
    """

    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    async def get(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> Session:
        """The session's history, its citations read as a live turn's are."""
        path, call = _request(
            self._client,
            session_id,
            extra_headers=extra_headers,
            extra_query=extra_query,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        response, body = await self._client._fetch(path, call)
        return session_from(response, body, session_id, self._client._errors, call)

    async def get_raw(
        self,
        session_id: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
        max_response_bytes: int | None = None,
    ) -> bytes:
        """The session's body exactly as the server sent it (decompressed), for tools that
        judge the wire; `parse_session(json.loads(body), session_id)` reads it as `get` does."""
        path, call = _request(
            self._client,
            session_id,
            extra_headers=extra_headers,
            extra_query=extra_query,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
        )
        _, body = await self._client._fetch(path, call)
        return body
