"""Helpers shared by the reference server's and the recordings' tests."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    ReferenceServer,
    record_turn,
)

from ..sse_helpers import iter_sse

AUTH = {"authorization": "Bearer test-token"}
CHAT = "/api/claude"
SESSIONS = "/api/chat/sessions/"
SSE = (("content-type", "text/event-stream"),)
MiB = 1024 * 1024


def sse_events(chunks: Iterable[bytes]) -> list[tuple[str, Any]]:
    """(event name, decoded JSON data) for every event of a body."""
    return [(event.event, json.loads(event.data)) for event in iter_sse(chunks)]


def http(server: ReferenceServer, **options: Any) -> httpx.Client:
    """A plain httpx client on `server`'s in-process transport, with a token."""
    return httpx.Client(
        transport=server.transport(), base_url=IN_PROCESS_URL, headers=AUTH, **options
    )


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether `condition()` holds within `timeout` seconds (a guard against a hang)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return condition()
        time.sleep(0.005)
    return True


@contextmanager
def peak() -> Iterator[list[int]]:
    """The peak of traced memory inside the block, in bytes (appended on exit)."""
    out: list[int] = []
    tracemalloc.start()
    try:
        yield out
    finally:
        out.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def recorded(scenario: str = "demo", **options: Any) -> Recording:
    """A turn of the reference server's `scenario`, recorded in-process."""
    headers = {SCENARIO_HEADER: scenario}
    return record_turn(
        "hi",
        transport=ReferenceServer().transport(),
        base_url=IN_PROCESS_URL,
        token="t",
        default_headers=headers,
        **options,
    )


def made(
    chunks: Iterable[bytes],
    *,
    reload: bytes | None = None,
    headers: tuple[tuple[str, str], ...] = SSE,
    reload_headers: tuple[tuple[str, str], ...] = (),
    end: str = "closed",
    gap: float = 0.0,
    message: str = "hi",
    session: str = "s",
) -> Recording:
    """A recording of `chunks` (the `i`th at `gap * i` s), and of `reload` for `session`."""
    chunks = list(chunks)
    return Recording(
        RecordedRequest("POST", CHAT, {"message": message}),
        RecordedResponse(
            200,
            headers,
            tuple(RecordedChunk(round(gap * i, 6), c) for i, c in enumerate(chunks, 1)),
            end,  # type: ignore[arg-type]
            round(gap * (len(chunks) + 1), 6),
        ),
        None if reload is None else RecordedReload(SESSIONS + session, 200, reload_headers, reload),
    )
