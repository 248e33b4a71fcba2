"""`silvia chat` and `silvia session show` against a server that echoes the token: never shown.

Each command runs as a subprocess (`python -m silvia_client`), as a user runs
it, against `tests.hostile.HostileServer` on 127.0.0.1; its stdout and stderr
are checked whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response

TOKEN = "sk-cli-hostile-0123456789-SECRET"
ECHO = {"x-request-id": TOKEN}
JSON = {"content-type": "application/json"}


def run(args: list[str], *, base_url: str, token: str = TOKEN) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    env.update(SILVIA_BASE_URL=base_url, SILVIA_TOKEN=token, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "silvia_client", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def answering(answer: bytes) -> HostileServer:
    def respond(request: Request, connection: Connection) -> None:
        connection.send(answer)
        connection.sock.close()

    return HostileServer(respond)


def stream(*events: bytes) -> bytes:
    return (
        head(200, {**SSE, **ECHO}, chunked=True) + b"".join(chunk(e) for e in events) + chunk(b"")
    )


CHAT = {
    "error-event": stream(
        event("session", {"sessionId": "s1"}),
        event("text", {"text": "Your balance"}),
        event("error", {"error": {"type": "overloaded", "message": f"echo {TOKEN}"}}),
    ),
    "no-done": stream(event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"})),
    "401": response(401, json.dumps({"error": f"bad token {TOKEN}"}).encode(), {**JSON, **ECHO}),
    "500-reason": response(500, b"", ECHO, reason=f"Broken {TOKEN}"),
    "200-html": response(200, f"<p>{TOKEN}</p>".encode(), {"content-type": "text/html", **ECHO}),
    "done": stream(
        event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"}), event("done", {})
    ),
}


@pytest.mark.parametrize("name", list(CHAT))
def test_silvia_chat_never_prints_the_token(name: str) -> None:
    with answering(CHAT[name]) as server:
        done = run(["chat", "hi"], base_url=server.url)
    assert done.returncode == (0 if name == "done" else 1), done.stderr
    assert TOKEN not in done.stdout
    assert TOKEN not in done.stderr
    if name != "done":
        assert "silvia chat:" in done.stderr  # the error was printed, blanked
    if name == "error-event":
        assert "<token>" in done.stderr


SESSION = {
    "200-html": response(200, f"<p>{TOKEN}</p>".encode(), {"content-type": "text/html", **ECHO}),
    "200-not-a-session": response(200, json.dumps({"messages": TOKEN}).encode(), {**JSON, **ECHO}),
    "404": response(
        404, json.dumps({"error": f"no such session {TOKEN}"}).encode(), {**JSON, **ECHO}
    ),
}


@pytest.mark.parametrize("name", list(SESSION))
def test_silvia_session_show_never_prints_the_token(name: str) -> None:
    with answering(SESSION[name]) as server:
        done = run(["session", "show", "s1"], base_url=server.url)
    assert done.returncode == 1
    assert TOKEN not in done.stdout
    assert TOKEN not in done.stderr
    assert "silvia session show:" in done.stderr
    assert "<token>" in done.stderr


@pytest.mark.parametrize("command", [["chat", "hi"], ["session", "show", "s1"]])
def test_a_token_read_with_its_newline_is_refused_unseen(command: list[str]) -> None:
    with answering(CHAT["done"]) as server:
        done = run(command, base_url=server.url, token=TOKEN + "\n")
        assert server.requests == []  # nothing was sent
    assert done.returncode == 1
    assert "SILVIA_TOKEN" in done.stderr
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize("command", [["chat", "hi"], ["session", "show", "s1"]])
def test_a_password_in_the_base_url_is_refused_unseen(command: list[str]) -> None:
    with answering(CHAT["done"]) as server:
        url = server.url.replace("http://", "http://alice:hunter2-pass@")
        done = run(command, base_url=url)
        assert server.requests == []
    assert done.returncode == 2  # a usage error, found before any client is made
    assert "credentials" in done.stderr
    assert "hunter2-pass" not in done.stdout + done.stderr
