"""`qa run`'s progress on stderr: a live line on a terminal, a line per prompt otherwise.

The terminal is a fake: a `StringIO` whose `isatty()` is true, put in as
`sys.stderr`; the clock is injected into `LiveProgress`, so the elapsed time
shown is exact and no test waits on the wall clock.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from silvia_client.cli import main
from silvia_client.cli.qa import LiveProgress
from silvia_client.qa import load_script, run_script

from ._cli import run_cli, write_script


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)


def _script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "s.json",
        [
            {"id": "good", "message": "Hi", "scenario": "demo"},
            {"id": "bad", "message": "Hi", "scenario": "broken-target-parses"},
        ],
    )


def test_the_live_line_says_done_errors_and_the_running_prompt(tmp_path: Path) -> None:
    now = [100.0]
    terminal = _Terminal()
    live = LiveProgress(terminal, 2, clock=lambda: now[0])
    script = load_script(_script(tmp_path))

    seen: list[str] = []

    def started(prompt: object) -> None:
        live.started(prompt)  # type: ignore[arg-type]
        now[0] += 2.5  # the turn takes 2.5 s on this clock
        seen.append(live.line())

    run_script(script, progress=live.finished, started=started)
    assert seen == ["[0/2] 0 error(s); running good, 2.5 s", "[1/2] 0 error(s); running bad, 2.5 s"]
    assert live.line() == "[2/2] 3 error(s)"  # broken-target-parses: three findings
    written = terminal.getvalue()
    assert written.count("\r\x1b[2K") == 4  # redrawn in place: two starts, two ends
    assert "\n" not in written
    live.close()
    assert terminal.getvalue().endswith("\r\x1b[2K")  # cleared before the table


def test_a_prompt_id_cannot_drive_the_terminal() -> None:
    live = LiveProgress(_Terminal(), 1, clock=lambda: 0.0)
    live.running["p\x1b]0;x\x07"] = 0.0
    assert "\x1b" not in live.line()


def test_on_a_terminal_qa_run_draws_the_live_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    with capsys.disabled():
        monkeypatch.setattr(sys, "stderr", terminal)
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        status = main(["qa", "run", str(_script(tmp_path))])
    assert status == 1
    err = terminal.getvalue()
    assert "\r\x1b[2K[2/2] 3 error(s)" in err
    assert "running good" in err
    assert "[1/2] good: ok" not in err  # not the CI lines


def test_off_a_terminal_one_line_per_prompt_and_quiet_silences_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = str(_script(tmp_path))
    _, _, err = run_cli(["qa", "run", script], capsys)
    assert "[1/2] good: ok (0 error(s), 0 warning(s))" in err.splitlines()
    assert "\r" not in err
    _, _, err = run_cli(["qa", "run", script, "--quiet"], capsys)
    assert "[1/2]" not in err
    assert "[2/2]" not in err
