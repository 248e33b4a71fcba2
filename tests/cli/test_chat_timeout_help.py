"""`silvia chat --help` and `docs/cli.md` state `--timeout`'s and `--deadline`'s defaults
as the client applies them to a turn sent without the flags (the help said "none" for a
deadline that was 600 s)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from silvia_client import SilviaClient
from silvia_client.cli import main

DOCS = Path(__file__).parents[2] / "docs" / "cli.md"

TIMEOUT = re.compile(
    r"default: (\S+) to connect, (\S+) to send, (\S+) for the answer to start, "
    r"(\S+) between events\)"
)
DEADLINE = re.compile(r"deadline`?; default: (\S+?)\)")


def applied() -> tuple[list[float | None], float]:
    """What a turn without `--timeout` and `--deadline` waits: `silvia chat`'s own client."""
    with SilviaClient(base_url="http://127.0.0.1:9") as client:  # as `client_for` makes it
        call = client._call("chat", timeout=None, idle_timeout=None)
        waits = call.timeouts()
        return [
            waits["connect"],
            waits["write"],
            waits["read"],
            call.options.idle_timeout,
        ], call.options.deadline


def said(text: str) -> tuple[list[float | None], float]:
    flat = " ".join(text.split())
    timeout, deadline = TIMEOUT.search(flat), DEADLINE.search(flat)
    assert timeout is not None, flat
    assert deadline is not None, flat
    return [float(n) for n in timeout.groups()], float(deadline.group(1))


def test_chat_help_states_the_defaults_a_turn_gets(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    assert said(capsys.readouterr().out) == applied()


def test_the_cli_docs_state_the_defaults_a_turn_gets() -> None:
    section = DOCS.read_text(encoding="utf-8").split("## `silvia chat`")[1].split("\n## ")[0]
    assert said(section) == applied()
