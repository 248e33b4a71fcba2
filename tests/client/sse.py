"""Event-stream and session bodies built by hand, and response bodies that misbehave on cue.

`event(...)` and friends build the exact bytes of one SSE event; `Body` is a
response body (sync and async) that yields given chunks, then optionally raises
a transport error or hangs, and records whether it was closed.
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import anyio
import httpx

BASE_URL = "https://silvia.test"
CHAT_URL = BASE_URL + "/api/claude"
TOKEN = "sk-silvia-TEST-0123456789-secret"
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": "req_123"}

ACCOUNT_A = "acct_AAAAAAAAAAAAAAAA"
ACCOUNT_B = "acct_BBBBBBBBBBBBBBBB"
ACCOUNT_C = "acct_CCCCCCCCCCCCCCCC"
ACCOUNT_SOURCE = "silvia://your-account/checking"
WEB_URL = "https://example.com/article"


def event(name: str, data: object) -> bytes:
    """One event; `data` is JSON-encoded unless it is already a string (sent as is)."""
    payload = data if isinstance(data, str) else json.dumps(data)
    lines = "".join(f"data: {line}\n" for line in payload.split("\n"))
    return f"event: {name}\n{lines}\n".encode()


def comment(text: str = "ping") -> bytes:
    return f": {text}\n\n".encode()


def session(session_id: str) -> bytes:
    return event("session", {"sessionId": session_id})


def text(delta: str) -> bytes:
    return event("text", {"text": delta})


def citation(row: dict[str, Any]) -> bytes:
    return event("citation", {"citation": row})


def summary(rows: list[Any]) -> bytes:
    return event("citations_summary", {"citations": rows})


def message(obj: dict[str, Any]) -> bytes:
    return event("message", obj)


def error(msg: str, kind: str | None = "overloaded_error") -> bytes:
    return event("error", {"error": {"type": kind, "message": msg}})


def done() -> bytes:
    return event("done", {})


def account(account_id: str, provider: str | None = "plaid") -> dict[str, Any]:
    return {"kind": "account", "accountId": account_id, "provider": provider}


def accounts(*refs: tuple[str, str | None]) -> dict[str, Any]:
    return {"kind": "accounts", "accounts": [{"accountId": a, "provider": p} for a, p in refs]}


def web(url: str = WEB_URL) -> dict[str, Any]:
    return {"kind": "web", "url": url}


def row(source: str, target: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A citation row as the server sends it; no `target` key when `target` is None."""
    out: dict[str, Any] = {"source": source, "title": f"title of {source}", "cited_text": "…"}
    if target is not None:
        out["target"] = target
    out.update(extra)
    return out


FINAL_MESSAGE = {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "x"}]}


def full_turn(session_id: str = "sess_1") -> bytes:
    """A complete, well-formed turn with every contract event."""
    return b"".join(
        [
            session(session_id),
            text("You have "),
            citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
            text("$120 in checking."),
            summary([row(ACCOUNT_SOURCE, account(ACCOUNT_A))]),
            message(FINAL_MESSAGE),
            done(),
        ]
    )


def body(*messages: dict[str, Any], **session_fields: Any) -> dict[str, Any]:
    """A `GET /api/chat/sessions/sess_1` answer."""
    session = {"id": "sess_1", "title": "Checking", **session_fields}
    return {"session": session, "messages": list(messages)}


def user(text: str = "How much is in checking?") -> dict[str, Any]:
    return {"id": "m1", "role": "user", "content": text, "created_at": "2025-01-01T00:00:00Z"}


def assistant(**fields: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": "You have "}, {"type": "text", "text": "$120."}]
    answer = {"id": "m2", "role": "assistant", "content": content}
    return {**answer, "created_at": "2025-01-01T00:00:05Z", **fields}


def compressed(data: bytes, wbits: int = 16 + zlib.MAX_WBITS) -> bytes:
    """`data` gzipped, or by `wbits` zlib-wrapped (15) or raw deflate (-15)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


class Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body: `chunks`, then `fail` raised (if given), or a hang (async only), or
    a keep-alive comment every `ping` seconds, forever."""

    def __init__(
        self,
        chunks: Iterable[bytes] | bytes,
        *,
        fail: Exception | None = None,
        hang: bool = False,
        ping: float | None = None,
    ) -> None:
        self.chunks = [chunks] if isinstance(chunks, bytes) else list(chunks)
        self.fail = fail
        self.hang = hang
        self.ping = ping
        self.closed = False
        self.sent = 0  # chunks handed out so far

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk
        while self.ping is not None:
            time.sleep(self.ping)
            yield comment()
        if self.fail is not None:
            raise self.fail

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk
        if self.hang:
            await anyio.sleep_forever()  # until cancelled
        while self.ping is not None:
            await asyncio.sleep(self.ping)
            yield comment()
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def sse_response(
    body: bytes | Body, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    stream = body if isinstance(body, Body) else Body(body)
    return httpx.Response(status, headers={**SSE_HEADERS, **(headers or {})}, stream=stream)


class TurnNotingTimeouts:
    """A respx side effect: a whole turn, noting a copy of the timeouts each request went out
    with (once the head has come, reading sets the read timeout to `idle_timeout`)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, float | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(dict(request.extensions["timeout"]))
        return sse_response(full_turn())


def json_response(
    obj: object, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(status, json=obj, headers=headers)
