"""`silvia chat` and `silvia session show` against a server that echoes the token: never shown.

In-process through `main(argv)` against `tests.hostile.HostileServer` on
127.0.0.1, which puts the token in every place a response has; stdout and stderr
are checked whole.
"""

from __future__ import annotations

import json

import pytest

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response
from ._cli import run

TOKEN = "sk-cli-hostile-0123456789-SECRET"
ECHO = {"x-request-id": TOKEN}
JSON = {"content-type": "application/json"}
HTML = response(200, f"<p>{TOKEN}</p>".encode(), {"content-type": "text/html", **ECHO})


def answering(answers: list[bytes]) -> HostileServer:
    """A server that sends the last of `answers` (a list the test appends to) to each request."""

    def respond(request: Request, connection: Connection) -> None:
        connection.send(answers[-1])
        connection.sock.close()

    return HostileServer(respond)


def stream(*events: bytes) -> bytes:
    body = b"".join(chunk(e) for e in events) + chunk(b"")
    return head(200, {**SSE, **ECHO}, chunked=True) + body


DONE = stream(
    event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"}), event("done", {})
)
CASES = {
    ("chat", "error-event"): stream(
        event("session", {"sessionId": "s1"}),
        event("text", {"text": "Your balance"}),
        event("error", {"error": {"type": "overloaded", "message": f"echo {TOKEN}"}}),
    ),
    ("chat", "no-done"): stream(
        event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"})
    ),
    ("chat", "401"): response(
        401, json.dumps({"error": f"bad token {TOKEN}"}).encode(), {**JSON, **ECHO}
    ),
    ("chat", "500-reason"): response(500, b"", ECHO, reason=f"Broken {TOKEN}"),
    ("chat", "200-html"): HTML,
    ("chat", "done"): DONE,
    ("session show", "200-html"): HTML,
    ("session show", "200-not-a-session"): response(
        200, json.dumps({"messages": TOKEN}).encode(), {**JSON, **ECHO}
    ),
    ("session show", "404"): response(
        404, json.dumps({"error": f"no such session {TOKEN}"}).encode(), {**JSON, **ECHO}
    ),
}
ARGV = {"chat": ["chat", "hi"], "session show": ["session", "show", "s1"]}


def test_no_answer_of_the_server_makes_a_command_print_the_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    monkeypatch.setenv("NO_COLOR", "1")
    answers = [DONE]
    with answering(answers) as server:
        for (command, name), answer in CASES.items():
            answers.append(answer)
            status, out, err = run([*ARGV[command], "--base-url", server.url], capsys)
            assert status == (0 if name == "done" else 1), (command, name, err)
            assert TOKEN not in out + err, (command, name)
            if name != "done":
                assert f"silvia {command}:" in err  # the error was printed, blanked
            if name == "error-event" or command == "session show":
                assert "<token>" in err, (command, name)


def test_a_token_with_a_newline_or_a_password_in_the_url_is_refused_unseen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in ARGV.values():
        with answering([DONE]) as server:
            monkeypatch.setenv("SILVIA_TOKEN", TOKEN + "\n")
            status, out, err = run([*argv, "--base-url", server.url], capsys)
            assert status == 1
            assert "SILVIA_TOKEN" in err
            assert TOKEN not in out + err
            monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
            url = server.url.replace("http://", "http://alice:hunter2-pass@")
            status, out, err = run([*argv, "--base-url", url], capsys)
            assert status == 2  # a usage error, found before any client is made
            assert "credentials" in err
            assert "hunter2-pass" not in out + err
            assert server.requests == []  # nothing was sent
