"""Where `silvia chat`'s message comes from, and `--scenario`, a header, not the message.

`silvia chat -`, and `silvia chat` with stdin not a terminal, read the message from
stdin; `--scenario NAME` picks the reference server's scenario with its header, so
the message (and the session's title) stay the user's.
"""

from __future__ import annotations

import io

import pytest

from silvia_client import SilviaClient
from silvia_client.sessions import Session

from ._cli import TOKEN, reference_turn, run, session_of, with_markers

QUESTION = "How much is in checking?"


def _stored(url: str, err: str) -> Session:
    with SilviaClient(base_url=url, token=TOKEN) as client:
        return client.sessions.get(session_of(err))


def test_chat_reads_the_message_from_stdin(
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
    assert [m.text for m in stored.messages if m.role == "user"] == [
        "What about my IRA?"
    ]  # not "-"


def test_scenario_is_a_header_and_the_message_stays_the_users(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
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
