"""`silvia serve -v`: one line per request, and nothing a request carried that is private.

The log's lines come from `LoopbackServer(log=...)`, tested in-process on
127.0.0.1: method, path (no query, what is not visible ASCII percent-encoded),
status, scenario and duration; never the token, the message, a body or a
header. Then the flag itself, as a user runs it, in a subprocess.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from silvia_client.testing import (
    IN_PROCESS_URL,
    LoopbackServer,
    ReferenceServer,
    ReplayServer,
    record_turn,
)

from ..interruptible import silvia_command

TOKEN = "serve-log-s3cret-token"
MESSAGE = "My salary is 123456 and my SSN is 078-05-1120"
LINE = re.compile(r"(GET|POST|PUT) (\S+) (\d{3}) scenario=(\S+) (\d+\.\d)ms")


def _raw(url: str, line: bytes, body: bytes) -> None:
    """A request httpx would refuse to send (control characters in its target)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            line + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        while sock.recv(65536):
            pass  # read the answer to its end: the log line is written once it is


def _requests(url: str) -> list[tuple[str, str, int, str]]:
    """What a client sends, and the (method, path, status, scenario) each line should show."""
    auth = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, timeout=30) as http:
        turn = http.post(
            "/api/claude",
            json={"message": MESSAGE},
            headers={**auth, "x-silvia-scenario": "accounts"},
        )
        session_id = re.search(r'"sessionId":\s*"([^"]+)"', turn.text)
        assert session_id is not None
        http.get(f"/api/chat/sessions/{session_id.group(1)}?token={TOKEN}", headers=auth)
        http.post("/api/claude", json={"message": f"/scenario search-web {MESSAGE}"}, headers=auth)
        http.post("/api/claude", json={"message": MESSAGE}, headers={"authorization": "Bearer x"})
    _raw(url, b"PUT /api/claude\x1b]0;pwned\x07?token=" + TOKEN.encode(), MESSAGE.encode())
    return [
        ("POST", "/api/claude", 200, "accounts"),
        ("GET", f"/api/chat/sessions/{session_id.group(1)}", 200, "-"),
        ("POST", "/api/claude", 200, "search-web"),
        ("POST", "/api/claude", 401, "demo"),
        ("PUT", "/api/claude%1B]0;pwned%07", 404, "-"),
    ]


def _check(lines: list[str], expected: list[tuple[str, str, int, str]]) -> None:
    assert len(lines) == len(expected), lines
    for line, (method, path, status, scenario) in zip(lines, expected, strict=True):
        match = LINE.fullmatch(line)
        assert match, line
        assert match.groups()[:4] == (method, path, str(status), scenario)
    text = "\n".join(lines)
    assert TOKEN not in text
    for private in ("salary", "123456", "078-05", "Bearer", "authorization", "\x1b", "\x07"):
        assert private not in text


def test_the_log_has_one_line_per_request_and_nothing_private() -> None:
    lines: list[str] = []
    loopback = LoopbackServer(ReferenceServer(token=TOKEN), log=lines.append)
    with loopback as url:
        expected = _requests(url)
    _check(lines, expected)


def test_a_log_that_fails_does_not_end_the_connection() -> None:
    def broken(line: str) -> None:
        raise OSError("stderr is gone")

    with (
        LoopbackServer(ReferenceServer(), log=broken) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        for _ in range(2):  # the same kept-alive connection serves the next request
            auth = {"authorization": "Bearer t"}
            answer = http.post("/api/claude", json={"message": "hi"}, headers=auth)
            assert answer.status_code == 200


def test_a_replay_server_logs_the_recording_its_header_names(tmp_path: Path) -> None:
    server = ReferenceServer()
    path = tmp_path / "accounts.jsonl"
    options = {"base_url": IN_PROCESS_URL, "token": "t"}
    record_turn(MESSAGE, transport=server.transport(), **options).save(path)
    lines: list[str] = []
    auth = {"authorization": "Bearer t"}
    named = {**auth, "x-silvia-scenario": "accounts"}
    with LoopbackServer(ReplayServer.from_files([str(path)]), log=lines.append) as url:
        httpx.post(f"{url}/api/claude", json={"message": MESSAGE}, headers=named, timeout=30)
        httpx.post(f"{url}/api/claude", json={"message": MESSAGE}, headers=auth, timeout=30)
    scenarios = [match.group(4) for match in map(LINE.fullmatch, lines) if match]
    assert scenarios == ["accounts", "-"]
    assert not any("salary" in line for line in lines)


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
def test_serve_v_logs_each_request_on_stderr(flag: str) -> None:
    process = subprocess.Popen(
        silvia_command("serve", "--port", "0", "--token", TOKEN, flag),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().rsplit(" ", 1)[-1].strip()
        expected = _requests(url)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)
    assert process.returncode == 0
    logged = [line.removeprefix("silvia serve: ") for line in err.splitlines()[1:]]
    _check(logged, expected)
    assert TOKEN not in out + err
