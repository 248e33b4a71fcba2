"""After `done`, the connection goes back to the pool, and a body that never ends costs little.

The server is uvicorn with sse-starlette on 127.0.0.1 (port 0), the stack a
Python Silvia would run: the test starts it and stops it. Which connection a
request came on is its client port, as the server saw it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn", reason="the `test` extra installs uvicorn")
sse = pytest.importorskip("sse_starlette.sse", reason="the `test` extra installs sse-starlette")
from starlette.applications import Starlette  # noqa: E402  (after the skips)
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from .conftest import Api  # noqa: E402

pytestmark = pytest.mark.anyio

GUARD = 60.0


def turn_events(after: str) -> AsyncIterator[dict[str, str]]:
    async def events() -> AsyncIterator[dict[str, str]]:
        yield {"event": "session", "data": json.dumps({"sessionId": "s1"})}
        yield {"event": "text", "data": json.dumps({"text": "Hello"})}
        yield {"event": "done", "data": "{}"}
        if after == "hang":  # the body never ends
            await asyncio.Event().wait()
        elif after == "chatter":  # far more than the drain reads, then the end
            for _ in range(64):
                yield {"comment": "x" * 16_384}

    return events()


class App:
    """The chat and session endpoints, recording the client port of each request."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.after = "end"

    async def chat(self, request: Request) -> Response:
        assert request.client is not None
        self.ports.append(request.client.port)
        response: Response = sse.EventSourceResponse(turn_events(self.after))  # importorskip: Any
        return response

    async def session(self, request: Request) -> Response:
        assert request.client is not None
        self.ports.append(request.client.port)
        return JSONResponse({"session": {"id": "s1", "title": "t"}, "messages": []})

    def asgi(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/api/claude", self.chat, methods=["POST"]),
                Route("/api/chat/sessions/{id}", self.session),
            ]
        )


@pytest.fixture
def served() -> Iterator[tuple[App, str]]:
    app = App()
    config = uvicorn.Config(
        app.asgi(), host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    start = time.monotonic()
    while not server.started and time.monotonic() - start < GUARD:
        time.sleep(0.01)
    assert server.started
    port = server.servers[0].sockets[0].getsockname()[1]
    yield app, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(GUARD)
    assert not thread.is_alive()


async def turn(api: Api, client: Any) -> Any:
    return (
        await asyncio.wait_for(api.turn(client), GUARD) if api.is_async else await api.turn(client)
    )


async def test_after_done_the_connection_is_used_again_unless_the_body_goes_on(
    api: Api, served: tuple[App, str]
) -> None:
    app, url = served
    client = api.client(base_url=url, token="t")
    for _ in range(3):
        assert (await turn(api, client)).complete
    await api.session(client, "s1")
    assert len(app.ports) == 4
    assert len(set(app.ports)) == 1, app.ports  # one connection for all four
    # A body that never ends; 1 MiB of comments after `done`; then one that ends.
    for after in ("hang", "chatter", "end"):
        app.after = after
        assert (await turn(api, client)).complete, after  # the drain gives up at its bound
    assert len(set(app.ports)) == 3  # and closed the connection each time
