"""Ctrl-C ends every one-shot command with "interrupted" and 130; a reader that leaves, quietly.

`silvia serve` is a subprocess sent SIGINT (its own handler turns the signal
into the common ending) and SIGTERM (a clean stop, status 0, as supervisors
and the coverage run expect). `record`, `session show` and `chat` meet a
`KeyboardInterrupt` in-process, where their work is. A stdout closed before
the command writes (`silvia ... | head`) ends it with status 1 and nothing on
stderr but what the command says anyway: no internal error, no traceback.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.cli import main
from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command

URL_LINE = re.compile(r"Silvia reference server on (http://127\.0\.0\.1:\d+)\n")
TOKEN = "interrupt-s3cret-token"


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


def _serve(*args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        silvia_command("serve", "--port", "0", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert URL_LINE.fullmatch(process.stdout.readline()), "the first line names the URL"
    assert "Ctrl-C to stop" in process.stderr.readline()  # up, and listening
    return process


@pytest.mark.parametrize(
    ("stop", "status", "last_line"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 0, None)],
    ids=["SIGINT", "SIGTERM"],
)
def test_serve_ends_on_ctrl_c_like_every_command_and_on_sigterm_cleanly(
    stop: signal.Signals, status: int, last_line: str | None
) -> None:
    process = _serve("--token", TOKEN)
    try:
        process.send_signal(stop)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)
    assert process.returncode == status
    lines = err.splitlines()
    if last_line is None:
        assert "interrupted" not in lines
    else:
        assert lines[-1] == last_line
    assert "Traceback" not in err
    assert TOKEN not in out + err


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer().serve_loopback() as url:
        yield url


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["record", "hi", "-o", "turn.jsonl"], "silvia_client.cli._common.play_turn"),
        (["chat", "hi"], "silvia_client.cli._render.TerminalRenderer.event"),
        (["session", "show", "s1"], "silvia_client.SilviaClient.__enter__"),
    ],
    ids=["record", "chat", "session show"],
)
def test_ctrl_c_mid_command_is_interrupted_and_130(
    argv: list[str],
    target: str,
    server_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    if argv[0] == "session":
        argv = [*argv, "--base-url", server_url]
    monkeypatch.setattr(target, _interrupt)
    assert main(argv) == 130
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == "interrupted"
    assert "internal error" not in err
    assert not (tmp_path / "turn.jsonl").exists()  # Ctrl-C writes no half recording
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "argv",
    [
        ["chat", "How much is in checking?"],
        ["demo", "--pace", "0"],
        ["serve", "--list"],
        ["qa", "rules"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_reader_that_leaves_ends_the_command_quietly(argv: list[str]) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("SILVIA_BASE_URL", None)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write breaks the pipe
    try:
        done = subprocess.run(
            silvia_command(*argv),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert "Exception ignored" not in done.stderr
