"""`silvia serve`: its own names only (a DNS-rebinding page's `Host` gets 421), a log with
nothing private (`-v`: method, path without query, status, scenario, duration), and how it
stops (SIGTERM 0, Ctrl-C 130). The parts in-process; then the command, in a subprocess.
"""

from __future__ import annotations

import ipaddress
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from hypothesis import assume, given
from hypothesis import strategies as st

from silvia_client.testing import (
    IN_PROCESS_URL,
    LoopbackServer,
    ReferenceServer,
    ReplayServer,
    record_turn,
)
from silvia_client.testing._loopback import host_allowed

from ..interruptible import silvia_command

ALLOWED = ("silvia", "api.internal")
TOKEN = "serve-s3cret-token"
REBIND = "rebind.attacker.example"
MESSAGE = "My salary is 123456 and my SSN is 078-05-1120"
LINE = re.compile(r"(GET|POST|PUT) (\S+) (\d{3}) scenario=(\S+) (\d+\.\d)ms")
# Letters of a host name, some that only look like ASCII (dotless i, Kelvin sign, fullwidth).
LABEL = st.text("abcxyz09_-ıKé\uff41", min_size=1, max_size=12)


def _any_case(draw: st.DrawFn, name: str) -> str:
    upper = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.upper() if up else c for c, up in zip(name, upper, strict=True))


@st.composite
def _hosts(draw: st.DrawFn) -> tuple[str, bool]:
    """A `Host` header's value, and whether `silvia serve --allow-host ALLOWED` answers it."""
    port = draw(st.sampled_from(["", ":"]) | st.integers(0, 65535).map(lambda p: f":{p}"))
    kind = draw(st.sampled_from(["ipv4", "ipv6", "bare ipv6", "ours", "other", "suffixed"]))
    if kind == "ipv4":
        return f"{draw(st.ip_addresses(v=4))}{port}", True
    if kind == "ipv6":
        return f"[{draw(st.ip_addresses(v=6))}]{port}", True
    if kind == "bare ipv6":  # not a valid Host: the port could not be told from the address
        return f"{draw(st.ip_addresses(v=6))}{port}", False
    ours = draw(st.sampled_from(["localhost", *ALLOWED]))
    if kind == "ours":
        return _any_case(draw, ours) + draw(st.sampled_from(["", "."])) + port, True
    if kind == "suffixed":  # an attacker's name that starts or ends like ours
        other = draw(st.sampled_from([f"{ours}.{REBIND}", f"{REBIND}.{ours}", f"x{ours}", ""]))
        return f"{other}{port}", False
    name = ".".join(draw(st.lists(LABEL, min_size=1, max_size=4))) + draw(
        st.sampled_from(["", "."])
    )
    assume(name.lower().rstrip(".") not in {"localhost", *ALLOWED})
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        return f"{name}{port}", False
    return f"{name}{port}", True


@given(_hosts())
def test_host_allowed_takes_ip_literals_localhost_and_the_given_names_only(
    case: tuple[str, bool],
) -> None:
    host, answered = case
    assert host_allowed(host, ALLOWED) is answered
    assert host_allowed(host, [name.upper() for name in ALLOWED]) is answered  # flags any case
    assert host_allowed(None, ALLOWED) is False  # no Host at all (HTTP/1.0): not answered


def _raw(url: str, request: bytes) -> bytes:
    """What the server answers to `request`, sent as is (httpx would refuse to send it)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _requests(url: str) -> list[tuple[str, str, int, str]]:
    """What a client sends, and the (method, path, status, scenario) each line should show."""
    auth = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, timeout=30) as http:
        named = {**auth, "x-silvia-scenario": "accounts"}
        turn = http.post("/api/claude", json={"message": MESSAGE}, headers=named)
        session_id = re.search(r'"sessionId":\s*"([^"]+)"', turn.text)
        assert session_id is not None
        http.get(f"/api/chat/sessions/{session_id.group(1)}?token={TOKEN}", headers=auth)
        http.post("/api/claude", json={"message": f"/scenario search-web {MESSAGE}"}, headers=auth)
        http.post("/api/claude", json={"message": MESSAGE}, headers={"authorization": "Bearer x"})
    line = b"PUT /api/claude\x1b]0;pwned\x07?token=" + TOKEN.encode() + b" HTTP/1.1\r\n"
    head = b"Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(MESSAGE)
    _raw(url, line + head + MESSAGE.encode())  # read to its end: then the line is written
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
    for private in (TOKEN, "salary", "123456", "078-05", "Bearer", "authorization", "\x1b", "\x07"):
        assert private not in text


def test_the_log_has_one_line_per_request_and_nothing_private(tmp_path: Path) -> None:
    lines: list[str] = []
    with LoopbackServer(ReferenceServer(token=TOKEN), log=lines.append) as url:
        expected = _requests(url)
    _check(lines, expected)

    def broken(line: str) -> None:
        raise OSError("stderr is gone")

    auth = {"authorization": "Bearer t"}
    with (
        LoopbackServer(ReferenceServer(), log=broken) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        for _ in range(2):  # a log that fails ends no connection: the same one serves the next
            assert http.post("/api/claude", json={"message": "hi"}, headers=auth).status_code == 200

    path = tmp_path / "accounts.jsonl"
    record_turn(
        MESSAGE, transport=ReferenceServer().transport(), base_url=IN_PROCESS_URL, token="t"
    ).save(path)
    lines.clear()
    with LoopbackServer(ReplayServer.from_files([str(path)]), log=lines.append) as url:
        for headers in ({**auth, "x-silvia-scenario": "accounts"}, auth):
            httpx.post(f"{url}/api/claude", json={"message": MESSAGE}, headers=headers, timeout=30)
    assert [match.group(4) for match in map(LINE.fullmatch, lines) if match] == ["accounts", "-"]
    assert not any("salary" in line for line in lines)


@contextmanager
def _serving(*flags: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`silvia serve --port 0 FLAGS`, up and listening: the process and its URL."""
    process = subprocess.Popen(
        silvia_command("serve", "--port", "0", "--token", TOKEN, *flags),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        first = re.fullmatch(
            r"Silvia reference server on (http://127\.0\.0\.1:\d+)\n", process.stdout.readline()
        )
        assert first, "the first line names the URL"
        assert "Ctrl-C to stop" in process.stderr.readline()  # up, and listening
        yield process, first.group(1)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)


def test_serve_v_logs_each_request_and_sigterm_stops_it_cleanly() -> None:
    with _serving("-v") as (process, url):
        expected = _requests(url)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0
    _check([line.removeprefix("silvia serve: ") for line in err.splitlines()], expected)
    assert TOKEN not in out + err


def test_serve_answers_421_to_a_rebinding_host_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    recording = tmp_path / "accounts.jsonl"
    transport = ReferenceServer().transport()
    record_turn(
        "/scenario accounts hi", transport=transport, base_url=IN_PROCESS_URL, token="t"
    ).save(recording)
    with _serving("--allow-host", "SILVIA", "--replay", str(recording)) as (process, url):
        port = url.rsplit(":", 1)[1]
        with httpx.Client(
            base_url=url, timeout=30, headers={"authorization": f"Bearer {TOKEN}"}
        ) as http:

            def chat(host: str) -> httpx.Response:
                return http.post("/api/claude", json={"message": "hi"}, headers={"host": host})

            served = chat(f"localhost:{port}")
            assert served.status_code == 200
            session_id = re.search(r'"sessionId":\s*"([^"]+)"', served.text)
            assert session_id is not None
            session = f"/api/chat/sessions/{session_id.group(1)}"
            for host in ("LOCALHOST.", f"127.0.0.1:{port}", f"[::1]:{port}", f"silvia:{port}"):
                assert chat(host).text == served.text, host
            assert http.get(session, headers={"host": f"Silvia:{port}"}).status_code == 200
            refused = [
                chat(REBIND),
                chat(f"{REBIND}:{port}"),
                chat("other"),
                http.get(session, headers={"host": REBIND}),
                http.get("/anything", headers={"host": REBIND}),
            ]
        for answer in refused:
            assert answer.status_code == 421
            assert answer.headers["content-type"].startswith("text/plain")
            assert answer.text == "This server does not answer for that host name.\n"
        no_host = b"GET /api/chat/sessions/x HTTP/1.0\r\nAuthorization: Bearer t\r\n\r\n"
        assert _raw(url, no_host).startswith(b"HTTP/1.1 421 ")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err.splitlines()[-1] == "interrupted"
    assert "Traceback" not in err
    assert TOKEN not in out + err
