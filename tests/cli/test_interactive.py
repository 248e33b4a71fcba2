"""`silvia chat` with no message, on a terminal: a session, a turn per line.

Under a pty, as a subprocess against a reference server on 127.0.0.1 that the test
holds (to look at the session afterwards): Ctrl-C is SIGINT, as the terminal sends
it; Ctrl-D the end-of-input character. The timeouts only keep a broken command from
hanging the suite. Then in-process, stdin a keyboard that `input()` reads.
"""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client import SilviaClient
from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command
from ._cli import run, session_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")

PATIENCE = 120.0  # seconds to wait for the next expected output before giving up
TOKEN = "interactive-s3cret-token"


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


@pytest.fixture
def server() -> Iterator[tuple[ReferenceServer, str]]:
    reference = ReferenceServer(token=TOKEN)
    with reference.serve_loopback() as url:
        yield reference, url


def test_each_line_is_a_turn_of_one_session_ctrl_c_ends_a_turn_and_ctrl_d_quits(
    server: tuple[ReferenceServer, str], tmp_path: Path
) -> None:
    reference, url = server
    home = tmp_path / "home"  # where a history file would go: the test checks none does
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    env.update(SILVIA_BASE_URL=url, SILVIA_TOKEN=TOKEN, HOME=str(home), TERM="dumb")
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
    match = re.search(r"continue it with --session (\S+)", rest)
    assert match, rest
    assert len(reference.sessions) == 1  # one session, continued turn after turn
    with SilviaClient(base_url=url, token=TOKEN) as client:
        stored = client.sessions.get(match.group(1))
    users = [message.text for message in stored.messages if message.role == "user"]
    assert users == [
        "How much is in checking?",
        "What about my cards?",
        "/scenario fault-stall and now?",
    ]
    assert not any("never sent" in message.text for message in stored.messages)
    assert list(home.iterdir()) == []  # no history file: the messages are financial
    assert TOKEN not in terminal.seen + rest


class _Keyboard(io.StringIO):
    """Lines typed at a terminal, then Ctrl-D: what `input()` reads when stdin is no real one."""

    def isatty(self) -> bool:
        return True


def test_ctrl_d_ends_the_session_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", _Keyboard(""))  # Ctrl-D at the first prompt
    status, out, err = run(["chat"], capsys)
    assert (status, out) == (0, "You: \n")
    assert "--session" not in err
    monkeypatch.setattr("sys.stdin", _Keyboard("How much is in checking?\n   \n"))
    status, out, err = run(["chat", "--scenario", "accounts"], capsys)
    assert status == 0
    assert out.startswith("You: Silvia: ")  # the blank line is no turn
    assert out.count("Sources") == 1
    assert "Ctrl-D (end of input) quits" in err
    assert err.splitlines()[-1].startswith("silvia chat: session ")
    session_of(err)
