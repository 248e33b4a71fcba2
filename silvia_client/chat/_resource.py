"""`client.chat`: starting a chat turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._stream import AsyncChatStream, ChatStream

if TYPE_CHECKING:
    from .._client import AsyncSilviaClient, SilviaClient

__all__ = ["AsyncChat", "Chat"]


class Chat:
    def __init__(self, client: SilviaClient) -> None:
        self._client = client

    def stream(self, message: str, *, session_id: str | None = None) -> ChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        Pass `session_id` to continue a session; leave it out to start one.
        """
        client = self._client
        return ChatStream(
            lambda: client._open_chat(message, session_id),
            errors=client._errors,
            session_id=session_id,
        )


class AsyncChat:
    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    def stream(self, message: str, *, session_id: str | None = None) -> AsyncChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        Pass `session_id` to continue a session; leave it out to start one.
        """
        client = self._client
        return AsyncChatStream(
            lambda: client._open_chat(message, session_id),
            errors=client._errors,
            session_id=session_id,
        )
