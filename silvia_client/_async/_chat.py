"""`client.chat`: starting a chat turn (`stream`), or running one to its end (`send`).

The keywords after the message are `session_id` and this call's options: their
table is `RequestOptions`'s (`_options.py`), shared with `client.sessions`.
Everything is checked before anything is sent. `_sync/_chat.py` is generated from
this module (`tools/unasync.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

from .._options import check
from ._stream import AsyncChatStream

if TYPE_CHECKING:
    import httpx

    from ..chat._turn import Turn
    from ._client import AsyncSilviaClient

__all__ = ["AsyncChat"]


class AsyncChat:
    """`client.chat`: a turn as a stream of typed events, or sent and read whole."""

    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    def stream(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, object] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> AsyncChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        Pass `session_id` to continue a session; leave it out to start one.
        A `message` or `session_id` that is not a `str` is a `TypeError`; an
        empty (or all-whitespace) message, an empty session id, or one that
        cannot be sent as UTF-8 (a lone surrogate) is a `ConfigurationError`,
        a `ValueError`. Nothing is sent then.

        The other keywords are this turn's options, each None for the client's
        setting; their table is `RequestOptions`'s (in `silvia_client._options`).
        `timeout` bounds the wait for the answer to start; `idle_timeout`, each
        silence between its events after that.
        """
        check("message", message)
        check("session_id", session_id)
        client = self._client
        call = client._call(
            "chat",
            extra_headers=extra_headers,
            extra_body=extra_body,
            extra_query=extra_query,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        )
        opener = partial(client._open_chat, message, session_id, call)
        return AsyncChatStream(opener, errors=client._errors, call=call, session_id=session_id)

    async def send(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, object] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> Turn:
        """Run a turn to its end and return the `Turn`: `stream(...)` and `until_done()`.

        The keywords are `stream`'s. A turn that does not finish raises its
        `StreamError`, with the partial turn as `error.turn`.
        """
        async with self.stream(
            message,
            session_id=session_id,
            extra_headers=extra_headers,
            extra_body=extra_body,
            extra_query=extra_query,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        ) as stream:
            return await stream.until_done()
