"""Ctrl-C ends every command with "interrupted" and 130; a reader that leaves, quietly.

`record`, `session show` and `chat` meet a `KeyboardInterrupt` in-process, where
their work is; `silvia chat` streaming over 127.0.0.1 is a subprocess sent
SIGINT (`silvia serve`'s are in test_serve.py). A stdout closed before the
command writes (`silvia ... | head`) ends it with status 1 and no internal error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command
from ._cli import TOKEN, run


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_mid_command_is_interrupted_and_130(
    loopback: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for argv, target in [
        (["record", "hi", "-o", "turn.jsonl"], "silvia_client.cli._common.play_turn"),
        (["chat", "hi"], "silvia_client.cli._render.TerminalRenderer.event"),
        (["session", "show", "s1", "--base-url", loopback], "silvia_client.SilviaClient.__enter__"),
    ]:
        with monkeypatch.context() as patch:
            patch.setattr(target, _interrupt)
            status, out, err = run(argv, capsys)
        assert status == 130, argv
        assert err.splitlines()[-1] == "interrupted"
        assert "internal error" not in err
        assert not (tmp_path / "turn.jsonl").exists()  # Ctrl-C writes no half recording
        assert TOKEN not in out + err


def test_ctrl_c_while_text_streams_says_interrupted_on_a_line_of_its_own() -> None:
    # A slow turn over 127.0.0.1; stdout and stderr share one pipe, as on a terminal.
    with ReferenceServer(pace=0.2).serve_loopback() as url:
        env = {**os.environ, "SILVIA_BASE_URL": url, "SILVIA_TOKEN": "t", "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            silvia_command("chat", "How much is in checking?"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        assert process.stdout is not None
        seen = b""
        while b"You have" not in seen:  # some of the answer is on screen, mid-line
            byte = process.stdout.read(1)
            assert byte, f"the command ended first: {seen!r}"
            seen += byte
        time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    output = (seen + rest).decode("utf-8")
    assert process.returncode == 130
    lines = output.splitlines()
    assert "interrupted" in lines
    assert lines[lines.index("interrupted") - 1].startswith("You have")
    assert "Traceback" not in output


def test_a_reader_that_leaves_ends_the_command_quietly() -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    env["PYTHONUNBUFFERED"] = "1"
    for argv in (["chat", "How much is in checking?"],):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first byte: every write breaks
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
        for said in ("internal error", "Traceback", "BrokenPipeError", "Exception ignored"):
            assert said not in done.stderr, (argv, done.stderr)
