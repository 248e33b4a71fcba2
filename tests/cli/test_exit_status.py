"""Exit status 4: an internal error in any command is one line (its type, never its message,
which holds the token here), never a traceback or 1; the traceback with `--debug` or
`SILVIA_DEBUG=1`, the token blanked. `silvia qa` still writes the reports it had started.
"""

from __future__ import annotations

import importlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import silvia_client.qa
import silvia_client.qa.report
from silvia_client.testing import Recording

from ._cli import run

TOKEN = "sk-live-0123456789abcdef-SECRET"
EXAMPLE = str(Path(__file__).parents[2] / "examples" / "qa_script.json")
HINT = "; --debug or SILVIA_DEBUG=1 prints the traceback"


def line(command: str) -> str:
    why = "a bug in silvia, not a finding about the server"
    return f"silvia {command}: internal error: RuntimeError ({why})"


def boom(*args: object, **kwargs: object) -> Any:
    raise RuntimeError(f"the server said {TOKEN}")


# argv, what to break, and how many lines stderr has before the internal error's.
COMMANDS: dict[str, tuple[list[str], Any, str, int]] = {
    "chat": (["chat", "hi"], "silvia_client.cli.chat", "client_for", 1),
    "session show": (
        ["session", "show", "s1", "--base-url", "http://127.0.0.1:9"],
        "silvia_client.cli._common",
        "client_for",
        1,
    ),
    "record": (["record", "hi", "-o", "turn.jsonl"], "silvia_client.cli.record", "_record", 1),
    "demo": (["demo", "--pace", "0"], "silvia_client.cli.demo", "_reload_agrees", 1),
    "serve": (["serve", "--replay", "turn.jsonl"], "silvia_client.cli.serve", "_replay_server", 0),
    "qa check": (["qa", "check", "turn.jsonl"], Recording, "load", 0),
    "qa run": (["qa", "run", EXAMPLE], silvia_client.qa, "run_script", 1),
}


def test_an_internal_error_is_one_line_and_exit_4(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
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
        assert TOKEN not in out + err


def test_debug_prints_the_traceback_with_the_token_blanked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("silvia_client.cli._server.choose_server", boom)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for debug, argv in [("", ["--debug", "chat", "hi"]), ("1", ["chat", "hi"])]:
        monkeypatch.setenv("SILVIA_DEBUG", debug)
        status, out, err = run(argv, capsys)
        assert (status, out) == (4, "")
        lines = err.splitlines()
        assert lines[0] == "Traceback (most recent call last):"
        assert "RuntimeError: the server said <token>" in lines
        assert lines[-1] == line("chat")  # the one line still ends it, without the hint
        assert TOKEN not in err
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

    monkeypatch.setattr(qa_cli, "_progress_line", progress_line)
    for concurrency in ("1", "2"):
        calls.clear()
        junit, report, html = tmp_path / "j.xml", tmp_path / "r.json", tmp_path / "r.html"
        argv = ["qa", "run", EXAMPLE, "--concurrency", concurrency, "--junit", str(junit)]
        status, out, err = run([*argv, "--json", str(report), "--html", str(html)], capsys)
        assert status == 4
        assert err.splitlines()[-1] == line("qa run") + HINT
        assert "interrupted" not in err  # no Ctrl-C here: the one line says what happened
        assert "Traceback" not in err
        data = json.loads(report.read_text(encoding="utf-8"))
        assert (data["ok"], data["interrupted"], len(data["prompts"])) == (False, True, 12)
        # One at a time the run stops at the second prompt, and those after it are marked
        # not run; on the async client, prompts in flight may still finish.
        if concurrency == "1":
            assert data["not_run"] == 10
            assert out.count("[not run]") == 10
        else:
            assert len(data["prompts"]) > data["not_run"]
        assert len(list(ET.parse(junit).getroot().iter("testcase"))) > 0
        assert "<html" in html.read_text(encoding="utf-8").lower()
        assert "silvia qa: 12 prompt(s)" in out  # the table was printed

    monkeypatch.setattr(qa_cli, "_progress_line", real)
    monkeypatch.setattr(silvia_client.qa.report, "write_junit", boom)
    report.unlink()
    argv = ["qa", "run", EXAMPLE, "--junit", str(junit), "--json", str(report), "--html", str(html)]
    status, out, err = run(argv, capsys)
    assert status == 4  # a report that raises keeps no other from being written
    assert err.splitlines()[-1] == line("qa run") + HINT
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is True  # the run itself passed
    assert "ok: 0 error(s)" in out
