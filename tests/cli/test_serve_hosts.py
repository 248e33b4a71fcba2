"""`silvia serve` answers only its own names: a DNS-rebinding page's `Host` gets 421.

A web page can point its own name at 127.0.0.1 and then read the local server as
same-origin; its requests carry that name in `Host`. The server answers an IP
literal, `localhost` and the names given with `--allow-host`, and nothing else.
First the matching function, as a property; then `silvia serve --replay` as a user
runs it, in a subprocess on 127.0.0.1, asked with each kind of `Host`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from silvia_client.cli import main
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer, record_turn
from silvia_client.testing._loopback import host_allowed

from ..interruptible import silvia_command

ALLOWED = ("silvia", "api.internal")
TOKEN = "serve-hosts-s3cret-token"
REBIND = "rebind.attacker.example"


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
    name = draw(st.from_regex(r"[\w-]{1,12}(\.[\w-]{1,12}){0,3}\.?", fullmatch=True))
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


def _raw_http10_without_host(url: str) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /api/chat/sessions/x HTTP/1.0\r\nAuthorization: Bearer t\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_serve_answers_421_to_a_rebinding_host_and_serves_its_own_names(tmp_path: Path) -> None:
    recording = tmp_path / "accounts.jsonl"
    options = {"base_url": IN_PROCESS_URL, "token": "t"}
    record_turn("/scenario accounts hi", transport=ReferenceServer().transport(), **options).save(
        recording
    )
    flags = ["--port", "0", "--token", TOKEN, "--allow-host", "SILVIA", "--replay", str(recording)]
    process = subprocess.Popen(
        silvia_command("serve", *flags),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().rsplit(" ", 1)[-1].strip()
        port = url.rsplit(":", 1)[1]
        auth = {"authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, timeout=30, headers=auth) as http:

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
        assert _raw_http10_without_host(url).startswith(b"HTTP/1.1 421 ")
    finally:
        process.terminate()
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert TOKEN not in out + err


def test_allow_host_takes_a_name_alone(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--allow-host", "silvia:8000"])
    assert caught.value.code == 2
    assert "argument --allow-host: not a host name: 'silvia:8000'" in capsys.readouterr().err
