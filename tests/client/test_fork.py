"""A forked child never reads from its parent's connections, and its deadlines fire (issue 28,
finding 4: a pre-fork server's workers read each other's answers). The cases run in one
`python -c` script, so that this process never forks (pytest has threads); the server runs
here and notes the connection (the client's port) each message came on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import silvia_client

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")

SCRIPT = r'''
import asyncio, json, os, select, signal, sys, time, warnings

import httpx

from silvia_client import AsyncSilviaClient, SilviaClient, SilviaError

url = sys.argv[1]
# Short timeouts: a side that waits for an answer the other one read fails in seconds.
SHORT = {"token": "t", "timeout": 5.0, "idle_timeout": 5.0, "max_retries": 0}


def answer(client, message):
    """What a turn of `client` (sync or async) read: its text and session id, or its error."""
    try:
        turn = client.chat.send(message)
        if isinstance(client, AsyncSilviaClient):
            turn = asyncio.run(turn)
    except SilviaError as error:
        return f"{type(error).__name__}: {error}"
    return [turn.text, turn.session_id]


def in_child(work):
    """Run `work()` in a forked child: its pid, and the pipe its JSON result comes on."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12 warns of fork() with threads running: the SDK's deadline thread
        # is, as in a server that used the client before it forked its workers.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            try:
                result = work()
            except BaseException as error:
                result = f"{type(error).__name__}: {error}"
            os.write(write, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def child_result(pid, read, seconds=20.0):
    ready, _, _ = select.select([read], [], [], seconds)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return f"no answer from the child in {seconds:.0f} s"
    data = b""
    while more := os.read(read, 65536):
        data += more
    os.waitpid(pid, 0)
    return json.loads(data)


def run(case):
    """What each side read; each message names its case (`own-child`), the server's key."""
    report = {}
    if case == "deadline":
        client = SilviaClient(base_url=url, **SHORT)
        report["before"] = answer(client, "deadline-before")  # the deadline thread starts here
        def timed():
            started = time.monotonic()
            fresh = SilviaClient(base_url=url, token="t", max_retries=0, deadline=0.5)
            return [answer(fresh, "keep-alive"), time.monotonic() - started]

        pid, read = in_child(timed)
        report["child"] = child_result(pid, read)
        return report
    own = case == "own"  # a caller's own http client, used before the fork
    client = SilviaClient(base_url=url, http_client=httpx.Client() if own else None, **SHORT)
    report["before"] = answer(client, f"{case}-before")  # the pool keeps its connection
    pid, read = in_child(lambda: answer(client, f"{case}-child"))
    if not own:
        report["parent"] = answer(client, f"{case}-parent")  # while the child sends its own
    report["child"] = child_result(pid, read)
    aclient = AsyncSilviaClient(
        base_url=url, http_client=httpx.AsyncClient() if own else None, **SHORT
    )
    report["async-before"] = answer(aclient, f"{case}-async-before")
    pid, read = in_child(lambda: answer(aclient, f"{case}-async-child"))
    report["async-child"] = child_result(pid, read)
    return report


print(json.dumps({case: run(case) for case in sys.argv[2:]}))
'''


class EchoServer:
    """Answers each chat turn with its own message, and notes the connection it came on."""

    def __init__(self) -> None:
        self.came_on: dict[str, int] = {}  # message -> the client's port

    def __call__(self, request: Request, connection: Connection) -> None:
        message = str(request.json()["message"])  # type: ignore[index]
        self.came_on[message] = connection.sock.getpeername()[1]
        if message == "keep-alive":  # comments forever: only a deadline ends this turn
            connection.send(head(200, SSE, chunked=True))
            while connection.send(chunk(b": keep-alive\n\n")) and connection.sleep(0.2):
                pass
            return
        connection.sleep(0.3)  # both sides' requests are under way before either is answered
        events = (
            event("session", {"sessionId": f"session-{message}"}),
            event("text", {"text": f"answer for {message}"}),
            event("done", {}),
        )
        body = b"".join(chunk(e) for e in events) + chunk(b"")
        if not connection.send(head(200, SSE, chunked=True) + body):
            connection.send(response(500))


def test_a_forked_child_reads_its_own_answers_and_its_deadlines_fire() -> None:
    echo = EchoServer()
    root = Path(silvia_client.__file__).resolve().parent.parent  # the tree under test
    env = {**os.environ, "PYTHONPATH": str(root)}
    with HostileServer(echo) as server:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, server.url, "sync", "deadline", "own"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    everything: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    report = everything["sync"]
    for side in ("before", "child", "parent", "async-before", "async-child"):
        assert report[side] == [f"answer for sync-{side}", f"session-sync-{side}"], side
    # The child opened a connection of its own; the parent kept using its own. An async
    # client's child gets a pool of its own too.
    assert echo.came_on["sync-child"] != echo.came_on["sync-before"]
    assert echo.came_on["sync-parent"] == echo.came_on["sync-before"]
    assert echo.came_on["sync-async-child"] != echo.came_on["sync-async-before"]

    report = everything["deadline"]
    assert isinstance(report["child"], list), report  # else: no answer from the child in 20 s
    error, seconds = report["child"]
    assert error.startswith(("StreamTimeoutError: ", "APITimeoutError: ")), report
    assert seconds < 15  # deadline=0.5; before, the read went on until the server stopped

    # A caller's own http client, used before the fork, is refused in the child.
    report = everything["own"]
    for prefix in ("", "async-"):
        assert report[f"{prefix}before"] == [
            f"answer for own-{prefix}before",
            f"session-own-{prefix}before",
        ]
        child = report[f"{prefix}child"]
        assert child.startswith("ClientClosedError: "), report
        assert "after the fork, in each worker" in child
        assert f"own-{prefix}child" not in echo.came_on  # nothing sent on the parent's connection
