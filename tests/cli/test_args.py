"""`silvia --version`, numeric arguments refused by argparse, and Ctrl-C on a line of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from silvia_client import __version__
from silvia_client.cli import main
from silvia_client.testing import ReferenceServer

from ..interruptible import silvia_command


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"silvia {__version__}\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--port", "99999"], "argument --port: use 0 to 65535 (0: any free port)"),
        (["serve", "--port", "-1"], "argument --port: use 0 to 65535 (0: any free port)"),
        (["serve", "--port", "80.5"], "argument --port: not a whole number: '80.5'"),
        (["serve", "--pace", "-1"], "argument --pace: use 0 or more and at most 60 seconds"),
        (["serve", "--pace", "nan"], "argument --pace: not a finite number: 'nan'"),
        (["serve", "--pace", "inf"], "argument --pace: not a finite number: 'inf'"),
        (["demo", "--pace", "-0.5"], "argument --pace: use 0 or more and at most 10 seconds"),
        (["demo", "--pace", "11"], "argument --pace: use 0 or more and at most 10 seconds"),
        (["qa", "run", "s.json", "--timeout", "0"], "argument --timeout: use more than 0 seconds"),
        (["qa", "run", "s.json", "--timeout", "-3"], "argument --timeout: use more than 0 seconds"),
    ],
)
def test_numeric_arguments_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: silvia ")
    assert err.endswith(f"error: {message}\n")
    assert "Traceback" not in err


def test_serve_on_an_out_of_range_port_prints_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "silvia_client", "serve", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith(
        "silvia serve: error: argument --port: use 0 to 65535 (0: any free port)\n"
    )


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
    answer = lines[lines.index("interrupted") - 1]
    assert answer.startswith("You have")
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--timeout", "StreamTimeoutError: no data within the idle timeout (0.2 s)"),
        ("--deadline", "StreamTimeoutError: the turn's deadline of 0.2 s passed"),
    ],
)
def test_chat_takes_a_timeout_and_a_deadline(
    option: str, message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    assert main(["chat", "/scenario fault-stall hi", option, "0.2"]) == 1  # it stalls for good
    out, err = capsys.readouterr()
    assert out.startswith("You have $4,210.55")  # what arrived is kept
    assert err.splitlines()[-1].startswith(f"silvia chat: {message} (request id req_")


@pytest.mark.parametrize("option", ["--timeout", "--deadline"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_chat_timeouts_are_checked_by_argparse(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["chat", "hi", option, value])
    assert caught.value.code == 2
    assert f"argument {option}: " in capsys.readouterr().err
