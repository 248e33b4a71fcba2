"""`silvia chat`, `session show` and `demo` as a user runs them: the output, where the message
comes from, `--scenario`, which server (said on stderr with nothing private) and the command
line's own hints. In-process through `main(argv)`; on a terminal, a subprocess under a pty."""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from silvia_client import AuthenticationError, ConfigurationError, SilviaClient
from silvia_client.cli._common import AUTH_HINT_REFUSED, AUTH_HINT_UNSET, terminal_message
from silvia_client.sessions import Session
from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command
from ..qa._helpers import write_script
from ._cli import CHECKING, TOKEN, Tty, private, reference_turn, run, session_of, with_markers

QUESTION = "How much is in checking?"


def test_chat_streams_the_answer_with_markers_then_the_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(["chat", QUESTION], capsys)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == with_markers(reference_turn(QUESTION))
    assert lines[1:] == [
        "",
        "Sources",
        "  [1] Checking (your account)",
        f"      {CHECKING}",
        "  [2] Credit card (2 of your accounts)",
        "      Credit card (1 of 2): /accounts/qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5",
        "      Credit card (2 of 2): /accounts/Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2",
        "  [3] AAPL (market data)",
        "  [4] Best high-yield savings accounts (web page)",
        "      https://www.bankrate.com/banking/savings/best-high-yield-savings-accounts/",
        "  [5] IRA contribution limits (tax document)",
        "      https://www.irs.gov/retirement-plans/ira-contribution-limits",
    ]
    assert "embedded reference server" in err
    assert re.search(r"session \S+; continue it with --session \S+", err)
    assert "\x1b" not in out  # not a terminal: plain links
    assert private(out, err)

    status, out, _ = run(["chat", "/scenario search-web rates?"], capsys)
    assert out.splitlines()[-3:] == [
        "  [1] Today's mortgage rates (web page)",
        "      https://www.freddiemac.com/pmms",
        "  [2] Search summary (no target: shown by its source and title)",
    ]
    status, out, _ = run(["chat", "/scenario no-citations hi"], capsys)
    assert out.endswith("\n\nNo sources cited.\n")
    assert "[1]" not in out


def test_the_web_url_makes_account_links_absolute(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["chat", QUESTION], ["demo", "--pace", "0"]):
        monkeypatch.delenv("SILVIA_WEB_URL", raising=False)
        status, out, err = run(argv, capsys)
        assert status == 0
        assert f"      {CHECKING}\n" in out, argv
        assert private(out, err), argv  # `silvia demo` names no provider either
        monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
        out = run(argv, capsys)[1]
        assert f"      https://app.example{CHECKING}\n" in out, argv
        assert " /accounts/" not in out
        out = run([*argv, "--web-url", "http://localhost:3000"], capsys)[1]
        assert f"      http://localhost:3000{CHECKING}\n" in out, argv  # the flag wins


def test_a_failure_is_one_line_on_stderr_exit_1_and_keeps_what_arrived(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for scenario, error in [
        ("status-500", "InternalServerError: 500: Internal server error."),
        ("status-401", "AuthenticationError: 401: Invalid bearer token."),
    ]:
        status, out, err = run(["chat", f"/scenario {scenario} hi"], capsys)
        assert (status, out) == (1, ""), scenario
        [note, line] = err.splitlines()
        assert "embedded reference server" in note
        assert line.startswith(f"silvia chat: {error}"), line
        # From the embedded server a 401 is a scenario playing one: no hint about the token,
        # which is the command's own.
        assert "SILVIA_TOKEN" not in line
        assert "token=" not in line
    status, out, err = run(["chat", "/scenario fault-error-event hi"], capsys)
    assert status == 1
    assert out.startswith("You have $4,210.55 in checking[1]")
    assert "\nSources\n  [1] Checking (your account)\n" in out
    assert err.splitlines()[-1].startswith("silvia chat: ServerStreamError: ")
    assert private(out, err)


def test_a_url_with_credentials_a_query_or_a_fragment_is_a_usage_error_that_hides_them(
    loopback: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    absolute = "must be an absolute http(s) URL"
    query = "--base-url must not have a query (?) or a fragment (#)"
    credentials = "must not hold credentials (user:password@): the token goes in SILVIA_TOKEN"
    named = {**_commands(tmp_path), "session show": ["session", "show", "nope"]}
    said = {name: "qa" if name == "qa run" else name for name in named}  # `silvia qa`'s own
    cases: list[tuple[dict[str, str], list[str], str]] = [
        *(({}, ["chat", "hi", "--base-url", loopback + tail], f"silvia chat: {query}")
          for tail in ("/?key=query-secret", "/#frag-secret", "?")),
        *(({"SILVIA_BASE_URL": "https://alice:pa55word@staging.example"}, argv,
           f"silvia {said[name]}: SILVIA_BASE_URL {credentials}") for name, argv in named.items()),
        *(({"SILVIA_BASE_URL": "not a url"}, argv,
           f"silvia {said[name]}: SILVIA_BASE_URL {absolute}") for name, argv in named.items()),
        *(({"SILVIA_WEB_URL": "javascript:alert(1)"}, argv,
           f"silvia {argv[0]}: SILVIA_WEB_URL {absolute}") for argv in (["chat", "hi"], ["demo"])),
        ({}, ["chat", "hi", "--base-url", "ftp://x"], f"silvia chat: --base-url {absolute}"),
        ({}, ["chat", "hi", "--base-url", "https://alice:pa55word@x.example"],
         f"silvia chat: --base-url {credentials}"),
        ({}, [*named["qa run"], "--base-url", "ftp://x"], f"silvia qa: --base-url {absolute}"),
        ({}, ["chat", "hi", "--web-url", "javascript:x"], f"silvia chat: --web-url {absolute}"),
        ({}, ["session", "show", "s1", "--web-url", "data:x"],
         f"silvia session show: --web-url {absolute}"),
        ({}, ["demo", "--web-url", "data:x"], f"silvia demo: --web-url {absolute}"),
        ({}, ["chat", "   "], "silvia chat: MESSAGE must not be empty"),
        ({}, ["session", "show", "sess_1"],
         "silvia session show: no --base-url and no SILVIA_BASE_URL: name the server to ask "
         "(the embedded reference server keeps nothing between runs)"),
    ]  # fmt: skip
    for env, argv, line in cases:
        with monkeypatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            assert run(argv, capsys) == (2, "", line + "\n"), (env, argv)


def test_chat_then_session_show_on_a_real_socket(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    status, chat_out, chat_err = run(["chat", QUESTION, "--base-url", loopback], capsys)
    assert status == 0
    assert "embedded" not in chat_err
    session_id = session_of(chat_err)

    monkeypatch.setenv("SILVIA_BASE_URL", loopback)  # the environment's URL serves as well
    status, _, err = run(
        ["chat", "/scenario market-data and stocks?", "--session", session_id], capsys
    )
    assert status == 0
    assert "embedded" not in err

    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    status, out, err = run(["session", "show", session_id], capsys)
    assert status == 0
    assert err == f"silvia session show: using {loopback} (from SILVIA_BASE_URL)\n"
    blocks = out.split("\n\n")
    assert blocks[0] == f"Session {session_id}: {QUESTION}"
    assert blocks[1] == f"You: {QUESTION}"
    first_answer = chat_out.split("\n\n")[0]
    # History rows carry no offsets: the text without markers, and the same sources.
    assert blocks[2] == "Silvia: " + re.sub(r"\[\d\]", "", first_answer)
    sources = chat_out.split("\n\n", 1)[1].rstrip("\n")
    assert blocks[3] == sources.replace(" /accounts/", " https://app.example/accounts/")
    assert blocks[4] == "You: /scenario market-data and stocks?"
    assert blocks[5] == "Silvia: Apple is at $227.48 and Microsoft at $415.10."
    assert blocks[6].splitlines() == [
        "Sources",
        "  [1] AAPL (market data)",
        "  [2] MSFT (market data)",
    ]
    assert private(chat_out, chat_err, out, err)
    out = run(["session", "show", session_id, "--web-url", "https://web.example"], capsys)[1]
    assert f"      https://web.example{CHECKING}\n" in out


def _stored(url: str, err: str) -> Session:
    with SilviaClient(base_url=url, token=TOKEN) as client:
        return client.sessions.get(session_of(err))


def test_the_message_comes_from_the_argument_or_stdin_and_scenario_is_a_header(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["chat", "-"], ["chat"]):
        monkeypatch.setattr("sys.stdin", io.StringIO(f"{QUESTION}\n"))  # not a terminal
        status, out, _ = run(argv, capsys)
        assert status == 0
        assert out.splitlines()[0] == with_markers(reference_turn(QUESTION)), argv
    for blank in ("", "  \n\n"):
        monkeypatch.setattr("sys.stdin", io.StringIO(blank))
        assert (
            run(["chat", "-"], capsys)[2].splitlines()[-1]
            == "silvia chat: MESSAGE must not be empty"
        )

    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    monkeypatch.setattr("sys.stdin", io.StringIO("What about my IRA?\n\n"))
    status, _, err = run(["chat", "-", "--base-url", loopback], capsys)
    assert status == 0
    stored = _stored(loopback, err)
    # The message read from stdin, not "-".
    assert [m.text for m in stored.messages if m.role == "user"] == ["What about my IRA?"]
    argv = ["chat", "Where do I stand?", "--scenario", "accounts", "--base-url", loopback]
    status, out, err = run(argv, capsys)
    assert status == 0
    assert out.splitlines()[0] == with_markers(reference_turn("/scenario accounts"))
    stored = _stored(loopback, err)
    assert stored.title == "Where do I stand?"  # not "/scenario accounts ..."
    assert stored.messages[0].text == "Where do I stand?"

    line = run(["chat", "hi", "--scenario", "acounts"], capsys)[2].splitlines()[-1]
    assert "Unknown scenario 'acounts'; `silvia serve --list` lists them." in line  # the server's

    for name in ("two words", "bad\nname", "-x", "café"):
        for command in (["chat", "hi"], ["record", "hi", "-o", "x"]):
            status, _, err = run([*command, f"--scenario={name}"], capsys)
            assert status == 2
            assert err.splitlines() == [
                f"silvia {command[0]}: --scenario takes a scenario's name: letters, digits, '-', "
                "'_' and '.', a letter or digit first (see `silvia serve --list`)"
            ], name


EMBEDDED = (
    "no --base-url and no SILVIA_BASE_URL: using the embedded reference server "
    "(in this process, made-up data)"
)


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command that talks to a server, by the name it gives itself."""
    script = write_script(tmp_path / "script.json", [{"message": "hi", "scenario": "demo"}])
    return {
        "chat": ["chat", "hi"],
        "record": ["record", "hi", "-o", str(tmp_path / "turn.jsonl")],
        "qa run": ["qa", "run", str(script)],
    }


def test_the_flag_else_the_environment_else_the_embedded_server_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = _commands(tmp_path)
    for name, argv in commands.items():
        status, _, err = run(argv, capsys)
        assert status == 0, err
        assert err.splitlines()[0] == f"silvia {name}: {EMBEDDED}"

    server = ReferenceServer(token=TOKEN)
    with server.serve_loopback() as url:
        monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
        monkeypatch.setenv("SILVIA_BASE_URL", url)
        for played, (name, argv) in enumerate(commands.items(), start=1):
            status, out, err = run(argv, capsys)
            assert status == 0, err
            assert err.splitlines()[0] == f"silvia {name}: using {url} (from SILVIA_BASE_URL)"
            assert len(server.sessions) == played  # the turn was played there, not in this process
            assert TOKEN not in out + err

        monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
        for name, argv in {**commands, "session show": ["session", "show", "nope"]}.items():
            _, out, err = run([*argv, "--base-url", f"{url}/"], capsys)
            assert err.splitlines()[0] == f"silvia {name}: using {url}/ (from --base-url)"
            assert TOKEN not in out + err
    # A wrong token with SILVIA_BASE_URL set is refused there, never run elsewhere
    # (tests/qa/test_run.py: the refusal stops the run with status 3).


def test_a_401_names_silvia_token_not_a_python_argument(
    loopback: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    commands = {
        "chat": ["chat", "hi"],
        "record": ["record", "hi", "-o", "turn.jsonl"],
        "session show": ["session", "show", "sess_1"],
    }
    for token, said, hint in [
        (None, "Missing bearer token.", AUTH_HINT_UNSET),
        ("a-wrong-token-value", "Invalid bearer token.", AUTH_HINT_REFUSED),
    ]:
        if token is not None:
            monkeypatch.setenv("SILVIA_TOKEN", token)
        for command, argv in commands.items():
            status, out, err = run([*argv, "--base-url", loopback], capsys)
            assert status == 1, command
            line = err.splitlines()[-1]
            assert line.startswith(f"silvia {command}: AuthenticationError: 401: "), line
            assert said in line  # the server's own words stay
            assert hint in line
            assert "token=" not in err
            assert "(request id req_" in line
            assert TOKEN not in out + err
            assert token is None or token not in out + err

    monkeypatch.delenv("SILVIA_TOKEN")
    with SilviaClient(base_url=loopback) as client, pytest.raises(AuthenticationError) as caught:
        client.sessions.get("sess_1")
    assert "token=" in str(caught.value)  # a hint for Python code, as the client words it
    assert "token=" not in terminal_message(caught.value)
    assert AUTH_HINT_UNSET in terminal_message(caught.value)

    for message, said in [
        (
            "no base URL: pass base_url=... or set the SILVIA_BASE_URL environment variable",
            "no base URL: pass --base-url or set SILVIA_BASE_URL",
        ),
        (
            "base_url must not hold credentials (user:password@): "
            "pass the token as token=... or in SILVIA_TOKEN",
            "base_url must not hold credentials (user:password@): put the token in SILVIA_TOKEN",
        ),
        ("web_url=... is not a URL", "--web-url is not a URL"),
        ("a message with no hint", "a message with no hint"),
    ]:
        assert terminal_message(ConfigurationError(message)) == said


PATIENCE = 120.0  # seconds to wait for the next expected output before giving up


class Terminal:
    """A command on a pty: type into it, read what it shows."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""  # everything shown so far
        self.position = 0  # where the last expectation ended in it

    def _read(self) -> str:
        ready, _, _ = select.select([self.master], [], [], PATIENCE)
        assert ready, f"nothing more shown: {self.seen[self.position :]!r}"
        try:
            return os.read(self.master, 65536).decode("utf-8", errors="replace")
        except OSError:  # the command ended and closed the pty
            return ""

    def expect(self, text: str) -> str:
        """Read until `text` shows after the last expectation; what showed up to its end."""
        start = self.position
        while text not in self.seen[start:]:
            data = self._read()
            assert data, f"the command ended before {text!r}: {self.seen[start:]!r}"
            self.seen += data
        self.position = self.seen.index(text, start) + len(text)
        return self.seen[start : self.position]

    def wait_for_input(self) -> None:
        """Wait until the command sits waiting for a key (readline misses a signal that lands
        while it handles one); Linux shows where a thread sleeps, elsewhere a pause serves."""
        wchan = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/wchan")
        for _ in range(int(PATIENCE / 0.01)):
            try:
                where = wchan.read_text()
            except OSError:
                time.sleep(0.5)
                return
            if "select" in where or "poll" in where:
                return
            time.sleep(0.01)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self) -> tuple[int, str]:
        """The exit status, and everything shown after the last expectation."""
        rest = ""
        while data := self._read():
            rest += data
        status = self.process.wait(timeout=PATIENCE)
        os.close(self.master)
        return status, rest

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=PATIENCE)


@pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")
def test_each_line_is_a_turn_of_one_session_ctrl_c_ends_a_turn_and_ctrl_d_quits(
    loopback: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # where a history file would go: the test checks none does
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    env.update(SILVIA_BASE_URL=loopback, SILVIA_TOKEN=TOKEN, HOME=str(home), TERM="dumb")
    env.update(INPUTRC=os.devnull, PYTHONUNBUFFERED="1", PYTHONSTARTUP="")
    terminal = Terminal(silvia_command("chat"), env)
    try:
        terminal.expect("Ctrl-D (end of input) quits")
        terminal.expect("You: ")
        terminal.type("How much is in checking?\r")
        first = terminal.expect("You: ")
        assert "Silvia: You have $4,210.55 in checking[1]" in first
        assert "Sources" in first

        terminal.type("What about my cards?\r")
        second = terminal.expect("You: ")
        assert "Silvia: " in second

        # A turn that stalls after its first words: Ctrl-C ends it, and the prompt is back.
        terminal.type("/scenario fault-stall and now?\r")
        terminal.expect("Silvia: You have")
        terminal.process.send_signal(signal.SIGINT)  # what the terminal sends for Ctrl-C
        cut = terminal.expect("You: ")
        assert "interrupted" in cut

        # Ctrl-C at the prompt drops the line being typed; the session goes on.
        terminal.type("never sent")
        terminal.expect("never sent")  # echoed: readline holds it, and waits for more
        terminal.wait_for_input()
        terminal.process.send_signal(signal.SIGINT)
        terminal.expect("You: ")
        terminal.type("\x04")  # Ctrl-D at the prompt
        status, rest = terminal.finish()
    finally:
        terminal.kill()
    assert status == 0
    assert "Traceback" not in terminal.seen + rest
    with SilviaClient(base_url=loopback, token=TOKEN) as client:
        stored = client.sessions.get(session_of(rest))  # one session, continued turn after turn
    users = [message.text for message in stored.messages if message.role == "user"]
    assert users == [
        "How much is in checking?",
        "What about my cards?",
        "/scenario fault-stall and now?",
    ]
    assert not any("never sent" in message.text for message in stored.messages)
    assert list(home.iterdir()) == []  # no history file: the messages are financial
    assert TOKEN not in terminal.seen + rest


def test_ctrl_d_ends_the_session_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", Tty(""))  # Ctrl-D at the first prompt
    status, out, err = run(["chat"], capsys)
    assert (status, out) == (0, "You: \n")
    assert "--session" not in err
    monkeypatch.setattr("sys.stdin", Tty("How much is in checking?\n   \n"))
    status, out, err = run(["chat", "--scenario", "accounts"], capsys)
    assert status == 0
    assert out.startswith("You: Silvia: ")  # the blank line is no turn
    assert out.count("Sources") == 1
    assert "Ctrl-D (end of input) quits" in err
    assert err.splitlines()[-1].startswith("silvia chat: session ")
    session_of(err)
