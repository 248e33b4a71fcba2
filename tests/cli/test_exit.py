"""How a command ends: an internal error is one line and exit 4 (its type, never its message;
the traceback with `--debug`), Ctrl-C is "interrupted" and 130 (`silvia serve`'s in
test_serve.py), a closed stdout (`silvia ... | head`) is 1 and no internal error."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

import silvia_client.qa
import silvia_client.qa.report
from silvia_client.testing import Recording, ReferenceServer

from ..interruptible import silvia_command
from ..qa._helpers import EXAMPLE, cases, write_script
from ._cli import TOKEN, run

SECRET = "sk-live-0123456789abcdef-SECRET"
HINT = "; --debug or SILVIA_DEBUG=1 prints the traceback"


def line(command: str) -> str:
    why = "a bug in silvia, not a finding about the server"
    return f"silvia {command}: internal error: RuntimeError ({why})"


def boom(*args: object, **kwargs: object) -> Any:
    raise RuntimeError(f"the server said {SECRET}")


# argv, what to break, and how many lines stderr has before the internal error's.
COMMANDS: dict[str, tuple[list[str], Any, str, int]] = {
    "chat": (["chat", "hi"], "silvia_client.cli.chat", "client_for", 1),
    "session show": (
        ["session", "show", "s1", "--base-url", "http://127.0.0.1:9"], "silvia_client.cli._common",
        "client_for", 1,
    ),
    "record": (["record", "hi", "-o", "turn.jsonl"], "silvia_client.cli.record", "_record", 1),
    "demo": (["demo", "--pace", "0"], "silvia_client.cli.demo", "_reload_agrees", 1),
    "serve": (["serve", "--replay", "turn.jsonl"], "silvia_client.cli.serve", "_replay_server", 0),
    "qa check": (["qa", "check", "turn.jsonl"], Recording, "load", 0),
    "qa run": (["qa", "run", EXAMPLE], silvia_client.qa, "run_script", 1),
}  # fmt: skip


def test_an_internal_error_is_one_line_and_exit_4_the_traceback_with_debug(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SILVIA_TOKEN", SECRET)
    for command, (argv, where, name, before) in COMMANDS.items():
        with monkeypatch.context() as patch:
            patch.setattr(
                importlib.import_module(where) if isinstance(where, str) else where, name, boom
            )
            status, out, err = run(argv, capsys)
        assert status == 4, command
        lines = err.splitlines()
        assert len(lines) == before + 1, err
        assert lines[-1] == line(command) + HINT
        assert "Traceback" not in err
        assert "the server said" not in err  # the type, never the message
        assert SECRET not in out + err
    monkeypatch.setattr("silvia_client.cli._server.choose_server", boom)
    for debug, argv in [("", ["--debug", "chat", "hi"]), ("1", ["chat", "hi"])]:
        monkeypatch.setenv("SILVIA_DEBUG", debug)
        status, out, err = run(argv, capsys)
        assert (status, out) == (4, "")
        lines = err.splitlines()
        assert lines[0] == "Traceback (most recent call last):"
        assert "RuntimeError: the server said <token>" in lines
        assert lines[-1] == line("chat")  # the one line still ends it, without the hint
        assert SECRET not in err
    for off in ("0", ""):
        monkeypatch.setenv("SILVIA_DEBUG", off)
        assert run(["chat", "hi"], capsys) == (4, "", line("chat") + HINT + "\n")


def test_qa_run_writes_its_reports_before_exit_4(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import silvia_client.cli.qa as qa_cli

    real, calls = qa_cli._progress_line, []

    def progress_line(*args: Any) -> str:
        calls.append(1)
        if len(calls) == 2:  # the second prompt
            boom()
        return real(*args)

    prompts = [{"message": "Hi", "scenario": s} for s in ("demo", "account", "pooling", "demo")]
    script = write_script(tmp_path / "s.json", prompts)
    monkeypatch.setattr(qa_cli, "_progress_line", progress_line)
    for concurrency in ("1", "2"):
        calls.clear()
        junit, report, html = tmp_path / "j.xml", tmp_path / "r.json", tmp_path / "r.html"
        argv = ["qa", "run", str(script), "--concurrency", concurrency, "--junit", str(junit)]
        status, out, err = run([*argv, "--json", str(report), "--html", str(html)], capsys)
        assert status == 4
        assert err.splitlines()[-1] == line("qa run") + HINT
        assert "interrupted" not in err  # no Ctrl-C here: the one line says what happened
        assert "Traceback" not in err
        data = json.loads(report.read_text(encoding="utf-8"))
        assert (data["ok"], data["interrupted"], len(data["prompts"])) == (False, True, 4)
        # One at a time the run stops at the second prompt, and those after it are marked
        # not run; on the async client, prompts in flight may still finish.
        if concurrency == "1":
            assert data["not_run"] == 2
            assert out.count("[not run]") == 2
        else:
            assert len(data["prompts"]) > data["not_run"]
        assert cases(junit)
        assert "<html" in html.read_text(encoding="utf-8").lower()
        assert "silvia qa: 4 prompt(s)" in out  # the table was printed

    monkeypatch.setattr(qa_cli, "_progress_line", real)
    monkeypatch.setattr(silvia_client.qa.report, "write_junit", boom)
    report.unlink()
    argv = ["qa", "run", str(script), "--junit", str(junit), "--json", str(report)]
    status, out, err = run([*argv, "--html", str(html)], capsys)
    assert status == 4  # a report that raises keeps no other from being written
    assert err.splitlines()[-1] == line("qa run") + HINT
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is True  # the run itself passed
    assert "ok: 0 error(s)" in out


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


def test_ctrl_c_while_text_streams_says_interrupted_and_a_reader_that_leaves_ends_quietly() -> None:
    # A turn that stalls mid-line over 127.0.0.1; stdout and stderr share one pipe, as on a
    # terminal.
    with ReferenceServer().serve_loopback() as url:
        env = {**os.environ, "SILVIA_BASE_URL": url, "SILVIA_TOKEN": "t", "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            silvia_command("chat", "How much is in checking?", "--scenario", "fault-stall"),
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
        # Now, mid-line, maybe mid-write: "interrupted" still starts a line of its own.
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    output = (seen + rest).decode("utf-8")
    assert process.returncode == 130
    lines = output.splitlines()
    assert "interrupted" in lines
    assert lines[lines.index("interrupted") - 1].startswith("You have")
    assert "Traceback" not in output
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write breaks
    try:
        done = subprocess.run(
            silvia_command("chat", "How much is in checking?"),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "PYTHONUNBUFFERED": "1"},
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1, done.stderr
    for said in ("internal error", "Traceback", "BrokenPipeError", "Exception ignored"):
        assert said not in done.stderr, done.stderr
