"""`silvia record` (the answer, a replayable file, which server, what goes wrong), and `silvia
serve`: `--replay`'s refusals, its own names only (a rebinding `Host` gets 421), a log with
nothing private, and how it stops (SIGTERM 0, Ctrl-C 130): in-process, then a subprocess."""

from __future__ import annotations

import ipaddress
import json
import re
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from silvia_client.citations import AccountsTarget
from silvia_client.cli._server import choose_server, shown_url
from silvia_client.testing import (
    IN_PROCESS_URL,
    LoopbackServer,
    Recording,
    ReferenceServer,
    ReplayServer,
    record_turn,
)
from silvia_client.testing._loopback import host_allowed

from ..interruptible import silvia_command
from ._cli import TOKEN, reference_turn, run, with_markers

ALLOWED = ("silvia", "api.internal")
REBIND = "rebind.attacker.example"
MESSAGE = "My salary is 123456 and my SSN is 078-05-1120"
LINE = re.compile(r"(GET|POST|PUT) (\S+) (\d{3}) scenario=(\S+) (\d+\.\d)ms")
# Letters of a host name, some that only look like ASCII (dotless i, Kelvin sign, fullwidth).
LABEL = st.text("abcxyz09_-ıKé\uff41", min_size=1, max_size=12)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A turn recorded on the reference server, saved as `accounts.jsonl`."""
    path = tmp_path_factory.mktemp("serve") / "accounts.jsonl"
    transport = ReferenceServer().transport()
    record_turn(MESSAGE, transport=transport, base_url=IN_PROCESS_URL, token="t").save(path)
    return path


def test_record_streams_the_answer_to_stderr_and_writes_a_replayable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "turn.jsonl"
    argv = ["record", "Where do I stand?", "--scenario", "accounts", "-o", str(path)]
    status, out, err = run(argv, capsys)
    assert (status, out) == (0, "")  # stdout stays empty: the answer is shown, not piped
    assert "using the embedded reference server" in err
    answer = with_markers(reference_turn("/scenario accounts"))
    assert f"Silvia: {answer}\n" in err
    assert err.index("Silvia: ") < err.index(f"wrote {path}: HTTP 200")  # streamed first
    assert "Sources" in err
    assert "the session reloaded (HTTP 200)" in err
    recording = Recording.load(path)
    assert recording.request.body["message"] == "Where do I stand?"
    with recording.client() as client:
        assert isinstance(client.chat.send("again").citations[0].target, AccountsTarget)

    status, _, _ = run(["record", "/scenario accounts", "--redact", "-o", str(path)], capsys)
    assert status == 0
    assert Recording.load(path).is_redacted
    assert b"plaid" not in path.read_bytes()
    assert b"acct_redacted_0001" in path.read_bytes()


def test_record_on_a_server_keeps_the_wire_data_but_the_token_and_continues_a_session(
    loopback: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Which server, said how: test_chat.py's test of every command that talks to one.
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    monkeypatch.setenv("SILVIA_BASE_URL", loopback)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    status, out, err = run(["record", "hi", "-o", str(first)], capsys)
    assert status == 0
    data = first.read_bytes()
    assert TOKEN.encode() not in data
    assert TOKEN not in out + err
    assert b'"provider": "plaid"' not in data  # JSON inside a text: escaped quotes
    assert b'\\"provider\\":\\"plaid\\"' in data  # kept by default: raw wire data

    reload = Recording.load(first).reload
    assert reload is not None
    session_id = reload.path.rsplit("/", 1)[1]
    status, _, err = run(
        ["record", "and then?", "--session", session_id, "-o", str(second)], capsys
    )
    assert status == 0
    recording = Recording.load(second)
    assert recording.request.body == {"message": "and then?", "sessionId": session_id}
    assert recording.reload is not None
    assert len(json.loads(recording.reload.body)["messages"]) == 4


def test_what_goes_wrong_is_one_line_and_no_credential_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "failed.jsonl"
    for scenario in ("fault-drop", "status-500"):  # a failed turn is written all the same
        status, _, err = run(["record", f"/scenario {scenario}", "-o", str(path)], capsys)
        assert status == 1
        assert f"wrote {path}" in err
        assert "(as recorded)" in err
        assert Recording.load(path).reload is None

    path = tmp_path / "missing-directory" / "turn.jsonl"
    status, _, err = run(["record", "hi", "-o", str(path)], capsys)
    assert status == 1
    assert err.splitlines()[-1] == f"silvia record: cannot write {path}: No such file or directory"

    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    path = tmp_path / "none.jsonl"
    status, out, err = run(
        ["record", "hi", "--base-url", "http://127.0.0.1:9", "-o", str(path)], capsys
    )
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 2  # which server, then the error
    assert lines[-1].startswith("silvia record: APIConnectionError: ")
    assert TOKEN not in out + err
    assert not path.exists()

    monkeypatch.chdir(tmp_path)
    for argv in (
        ["record", "hi"],  # no -o
        ["record", "  ", "-o", "x.jsonl"],
        ["record", "hi", "-o", "x.jsonl", "--base-url", "ftp://example.com"],
    ):
        assert run(argv, capsys)[0] == 2, argv
        assert not (tmp_path / "x.jsonl").exists()
    choice = choose_server(f"https://api.example/v1/{TOKEN}", "record")
    err = capsys.readouterr().err
    assert err == "silvia record: using https://api.example/v1/<token> (from --base-url)\n"
    assert choice.transport is None
    assert choice.client_options() == {"base_url": f"https://api.example/v1/{TOKEN}"}
    assert shown_url(f"https://api.example/{TOKEN}/x") == "https://api.example/<token>/x"
    assert shown_url("https://user:pw@api.example/v1") == "https://api.example/v1"


def test_serve_replay_refuses_what_it_cannot_serve(
    recording: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file that is no recording, named with its line: tests/testing/test_recording_format.py.
    good = tmp_path / "good.jsonl"
    (tmp_path / "a").mkdir()
    for path in (good, tmp_path / "a" / "good.jsonl"):
        Recording.load(recording).save(path)
    cases = [
        ([str(tmp_path / "nope.jsonl")], "cannot read"),
        ([str(good), str(tmp_path / "a" / "good.jsonl")], "two recordings named 'good'"),
        ([str(good), "--scenario", "demo"], "--replay serves recordings"),
        ([str(good), "--list"], "--replay serves recordings"),
        ([str(good), "--pace", "0.1"], "--replay serves recordings"),
    ]
    for argv, said in cases:
        status, out, err = run(["serve", "--replay", *argv], capsys)
        assert (status, out) == (2, ""), argv
        assert err.startswith("silvia serve: "), err
        assert said in err, err
        assert len(err.splitlines()) == 1
    assert run(["serve", "--timing"], capsys) == (
        2,
        "",
        "silvia serve: --timing goes with --replay\n",
    )


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


def test_a_log_that_fails_ends_no_connection_and_a_replay_logs_the_scenario_asked_for(
    recording: Path,
) -> None:
    def broken(line: str) -> None:
        raise OSError("stderr is gone")

    auth = {"authorization": "Bearer t"}
    with (
        LoopbackServer(ReferenceServer(), log=broken) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        for _ in range(2):  # a log that fails ends no connection: the same one serves the next
            assert http.post("/api/claude", json={"message": "hi"}, headers=auth).status_code == 200

    lines: list[str] = []
    with LoopbackServer(ReplayServer.from_files([str(recording)]), log=lines.append) as url:
        for headers in ({**auth, "x-silvia-scenario": "accounts"}, auth):
            httpx.post(f"{url}/api/claude", json={"message": MESSAGE}, headers=headers, timeout=30)
    assert [match.group(4) for match in map(LINE.fullmatch, lines) if match] == ["accounts", "-"]
    assert not any("salary" in line for line in lines)


def _start(*flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        silvia_command("serve", "--port", "0", "--token", TOKEN, *flags),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _url(process: subprocess.Popen[str]) -> str:
    """The URL the server says on its first line, once it is up and listening."""
    assert process.stdout is not None
    assert process.stderr is not None
    first = re.fullmatch(
        r"Silvia reference server on (http://127\.0\.0\.1:\d+)\n", process.stdout.readline()
    )
    assert first, "the first line names the URL"
    assert "Ctrl-C to stop" in process.stderr.readline()  # up, and listening
    return first.group(1)


def test_serve_v_logs_answers_421_to_a_rebinding_host_and_stops_on_sigterm_or_ctrl_c(
    recording: Path,
) -> None:
    # Started together: one logs (-v) and gets SIGTERM; one replays, takes its own names
    # only and gets Ctrl-C.
    logging = _start("-v")
    replaying = _start("--allow-host", "SILVIA", "--replay", str(recording))
    try:
        expected = _requests(_url(logging))
        logging.send_signal(signal.SIGTERM)
        url = _url(replaying)
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
        replaying.send_signal(signal.SIGINT)
        (out, err), (replay_out, replay_err) = (
            p.communicate(timeout=60) for p in (logging, replaying)
        )
    finally:
        for process in (logging, replaying):
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=60)
    assert logging.returncode == 0
    _check([line.removeprefix("silvia serve: ") for line in err.splitlines()], expected)
    assert replaying.returncode == 130
    assert replay_err.splitlines()[-1] == "interrupted"
    assert "Traceback" not in err + replay_err
    assert TOKEN not in out + err + replay_out + replay_err
