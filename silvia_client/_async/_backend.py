"""What the async I/O does its own way, by hand: `_sync/_backend.py` has the same names.

Sleeping and the drain's time bound go through anyio (a cancel scope around one loop,
never across a `yield`), so the async client runs under asyncio and trio alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable
from contextlib import AbstractContextManager

import anyio
import httpx

__all__ = ["ALREADY_RUNNING", "OTHER_CLIENT", "Opener", "drain_scope", "sleep"]

Opener = Callable[[], Awaitable[tuple[httpx.Response, AsyncIterable[bytes]]]]
"""How a stream opens its response and its decoded body: awaited."""

ALREADY_RUNNING: type[Exception] = RuntimeError
"""What reading or closing an async generator that another task is running raises."""

OTHER_CLIENT = "SilviaClient takes an httpx.Client"
"""The other twin's `http_client`, for the error that names this one's."""


async def sleep(seconds: float) -> None:
    """Wait `seconds` (before a retry), under whichever event loop runs."""
    await anyio.sleep(seconds)


drain_scope: Callable[[float], AbstractContextManager[object]] = anyio.move_on_after
"""The drain's time bound besides its guard's alarm: a cancel scope, which ends a read on
any transport (so the body is read to its end, and every async iterator over it too:
under trio, one left unfinished warns when it is collected)."""
