"""`client.chat`: starting a chat turn (`stream`), or running one to its end (`send`).

Every keyword after the message is per call: None means "the client's
setting" (see `SilviaClient`); `math.inf` as `deadline` means none. The
arguments are checked before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._options import check_text
from ..errors import ConfigurationError
from ._stream import AsyncChatStream, ChatStream

if TYPE_CHECKING:
    import httpx

    from .._client import AsyncSilviaClient, SilviaClient
    from ._turn import Turn

__all__ = ["AsyncChat", "Chat"]


def _check(message: object, session_id: object) -> None:
    check_text(message, "message")
    check_text(session_id, "session_id", optional=True)
    if session_id == "":
        raise ConfigurationError("session_id must not be empty (leave it out to start a session)")


class Chat:
    def __init__(self, client: SilviaClient) -> None:
        self._client = client

    def stream(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> ChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        Pass `session_id` to continue a session; leave it out to start one.
        `extra_headers` go with this request only. `timeout`, `idle_timeout`,
        `deadline` (seconds for the whole turn; `math.inf` for none),
        `max_event_bytes` and `max_response_bytes` override the client's for
        this turn; on a stream, the read timeout is the idle timeout.
        A `message` or `session_id` that is not a `str` is a `TypeError`; one
        that cannot be sent as UTF-8 (a lone surrogate) is a
        `ConfigurationError`, a `ValueError`. Nothing is sent then.
        """
        _check(message, session_id)
        client = self._client
        call = client._call(
            "chat",
            extra_headers=extra_headers,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        )
        return ChatStream(
            lambda: client._open_chat(message, session_id, call),
            errors=client._errors,
            call=call,
            session_id=session_id,
        )

    def send(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
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
        with self.stream(
            message,
            session_id=session_id,
            extra_headers=extra_headers,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        ) as stream:
            return stream.until_done()


class AsyncChat:
    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    def stream(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> AsyncChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        The keywords are those of `Chat.stream`.
        """
        _check(message, session_id)
        client = self._client
        call = client._call(
            "chat",
            extra_headers=extra_headers,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        )
        return AsyncChatStream(
            lambda: client._open_chat(message, session_id, call),
            errors=client._errors,
            call=call,
            session_id=session_id,
        )

    async def send(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> Turn:
        """Run a turn to its end and return the `Turn` (see `Chat.send`)."""
        async with self.stream(
            message,
            session_id=session_id,
            extra_headers=extra_headers,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        ) as stream:
            return await stream.until_done()
