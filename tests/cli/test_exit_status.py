"""Exit status 4: an internal error in any `silvia` command is one line, never a traceback or 1.

Each command is made to raise (an internal function monkeypatched) and run
in-process through `main(argv)`: status 4, one line on stderr naming the command
and the exception's type, never its message (which holds the token here); the
traceback only with `--debug` or `SILVIA_DEBUG=1`, the token blanked in it.
`silvia qa` still writes the reports a run had started, as on Ctrl-C.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from silvia_client.cli import main
from silvia_client.testing import Recording

TOKEN = "sk-live-0123456789abcdef-SECRET"
EXAMPLE = str(Path(__file__).parents[2] / "examples" / "qa_script.json")
HINT = "; --debug or SILVIA_DEBUG=1 prints the traceback"


def line(command: str, kind: str = "RuntimeError") -> str:
    why = "a bug in silvia, not a finding about the server"
    return f"silvia {command}: internal error: {kind} ({why})"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_DEBUG", raising=False)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)


def boom(*args: object, **kwargs: object) -> Any:
    raise RuntimeError(f"the server said {TOKEN}")


def _patch_recording_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Recording, "load", boom)


def _patch_run_script(monkeypatch: pytest.MonkeyPatch) -> None:
    import silvia_client.qa

    monkeypatch.setattr(silvia_client.qa, "run_script", boom)


# argv, what to break, and how many lines stderr has before the internal error's.
COMMANDS: dict[str, tuple[list[str], Callable[[pytest.MonkeyPatch], None], int]] = {
    "chat": (
        ["chat", "hi"],
        lambda mp: mp.setattr("silvia_client.cli.chat.client_for", boom),
        1,  # playing on the embedded server, said
    ),
    "session show": (
        ["session", "show", "s1", "--base-url", "http://127.0.0.1:9"],
        lambda mp: mp.setattr("silvia_client.cli._common.client_for", boom),
        1,  # the server it asks, said
    ),
    "record": (
        ["record", "hi", "-o", "turn.jsonl"],
        lambda mp: mp.setattr("silvia_client.cli.record._record", boom),
        1,  # the embedded server, said
    ),
    "demo": (
        ["demo", "--pace", "0"],
        lambda mp: mp.setattr("silvia_client.cli.demo._stream_turn", boom),
        1,  # playing on the embedded server, said
    ),
    "serve": (
        ["serve", "--replay", "turn.jsonl"],
        lambda mp: mp.setattr("silvia_client.cli.serve._replay_server", boom),
        0,
    ),
    "qa check": (["qa", "check", "turn.jsonl"], _patch_recording_load, 0),
    "qa run": (["qa", "run", EXAMPLE], _patch_run_script, 1),  # the embedded server, said
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_internal_error_is_one_line_and_exit_4(
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv, patch, before = COMMANDS[command]
    monkeypatch.chdir(tmp_path)
    patch(monkeypatch)
    assert main(argv) == 4
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == before + 1, err
    assert lines[-1] == line(command) + HINT
    assert "Traceback" not in err
    assert "the server said" not in err  # the type, never the message
    assert TOKEN not in out + err


@pytest.mark.parametrize("how", ["--debug", "SILVIA_DEBUG=1"])
def test_debug_prints_the_traceback_with_the_token_blanked(
    how: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("silvia_client.cli._server.choose_server", boom)
    argv = ["chat", "hi"]
    if how == "--debug":
        argv = ["--debug", *argv]
    else:
        monkeypatch.setenv("SILVIA_DEBUG", "1")
    assert main(argv) == 4
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "RuntimeError: the server said <token>" in lines
    assert lines[-1] == line("chat")  # the one line still ends it, without the hint
    assert TOKEN not in err


@pytest.mark.parametrize("value", ["0", ""])
def test_silvia_debug_off_prints_no_traceback(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("silvia_client.cli._server.choose_server", boom)
    monkeypatch.setenv("SILVIA_DEBUG", value)
    assert main(["chat", "hi"]) == 4
    assert capsys.readouterr().err == line("chat") + HINT + "\n"


def test_help_lists_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--debug" in help_text
    for status in (
        "0 ok",
        "1 an error",
        "2 usage error",
        "3 server unreachable or credentials refused",
        "4 internal error",
        "130 interrupted",
    ):
        assert status in help_text
    with pytest.raises(SystemExit):
        main(["qa", "run", "--help"])
    assert "4 internal error" in " ".join(capsys.readouterr().out.split())


def test_the_statuses_already_mapped_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "   "]) == 2  # a usage error
    assert main(["qa", "check", str(tmp_path / "missing.jsonl")]) == 2
    with pytest.raises(SystemExit) as exit_info:  # argparse's own
        main(["chat", "hi", "--timeout"])
    assert exit_info.value.code == 2
    assert "internal error" not in capsys.readouterr().err


# silvia qa: the reports a run started are written -------------------------------------------


def _fail_at_second_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    import silvia_client.cli.qa as qa_cli

    real = qa_cli._progress_line
    calls: list[int] = []

    def progress_line(*args: Any) -> str:
        calls.append(1)
        if len(calls) == 2:
            boom()
        return real(*args)

    monkeypatch.setattr(qa_cli, "_progress_line", progress_line)


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_qa_run_writes_its_reports_before_exit_4(
    concurrency: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _fail_at_second_prompt(monkeypatch)
    junit, report, html = tmp_path / "junit.xml", tmp_path / "report.json", tmp_path / "r.html"
    argv = ["qa", "run", EXAMPLE, "--concurrency", concurrency]
    argv += ["--junit", str(junit), "--json", str(report), "--html", str(html)]
    assert main(argv) == 4
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == line("qa run") + HINT
    assert "interrupted" not in err  # no Ctrl-C here: the one line says what happened
    assert "Traceback" not in err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["ok"] is False
    assert data["interrupted"] is True  # cut short, as on Ctrl-C
    assert len(data["prompts"]) == 12
    # One at a time the run stops at the second prompt, and those after it are marked
    # not run; on the async client, prompts in flight may still finish.
    assert data["not_run"] == 10 if concurrency == "1" else len(data["prompts"]) > data["not_run"]
    assert len(list(ET.parse(junit).getroot().iter("testcase"))) > 0
    assert "<html" in html.read_text(encoding="utf-8").lower()
    assert "silvia qa: 12 prompt(s)" in out  # the table was printed
    if concurrency == "1":
        assert out.count("[not run]") == 10
    assert TOKEN not in out + err + report.read_text(encoding="utf-8")


def test_a_report_that_raises_does_not_keep_the_others_from_being_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import silvia_client.qa.report

    monkeypatch.setattr(silvia_client.qa.report, "write_junit", boom)
    report, html = tmp_path / "report.json", tmp_path / "r.html"
    argv = ["qa", "run", EXAMPLE, "--junit", str(tmp_path / "j.xml")]
    argv += ["--json", str(report), "--html", str(html)]
    assert main(argv) == 4
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == line("qa run") + HINT
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is True  # the run itself passed
    assert html.stat().st_size > 0
    assert "ok: 0 error(s)" in out
