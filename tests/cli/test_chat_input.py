"""Where `silvia chat`'s message comes from, and `--scenario` on `chat` and `record`.

`silvia chat -` and `silvia chat` with stdin not a terminal read the message
from stdin; `--scenario NAME` picks the reference server's scenario with its
header, so the message (and the session's title) stay the user's. `silvia
record` streams the answer to stderr while it records. In-process through
`main(argv)`, on the embedded server or one on 127.0.0.1.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client import SilviaClient
from silvia_client.citations import AccountsTarget
from silvia_client.cli import main
from silvia_client.testing import Recording, ReferenceServer

from .test_chat import reference_turn, with_markers

QUESTION = "How much is in checking?"


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


@pytest.fixture
def server() -> Iterator[tuple[ReferenceServer, str]]:
    reference = ReferenceServer()
    with reference.serve_loopback() as url:
        yield reference, url


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))  # not a terminal


@pytest.mark.parametrize("argv", [["chat", "-"], ["chat"]], ids=["dash", "no message"])
def test_chat_reads_the_message_from_stdin(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, f"{QUESTION}\n")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == with_markers(reference_turn(QUESTION))


def test_a_dash_message_is_never_sent_as_itself(
    server: tuple[ReferenceServer, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, url = server
    _stdin(monkeypatch, "What about my IRA?\n\n")
    monkeypatch.setenv("SILVIA_TOKEN", "t")
    assert main(["chat", "-", "--base-url", url]) == 0
    err = capsys.readouterr().err
    session_id = err.split("continue it with --session ")[1].split()[0]
    with SilviaClient(base_url=url, token="t") as client:
        stored = client.sessions.get(session_id)
    assert [m.text for m in stored.messages if m.role == "user"] == ["What about my IRA?"]


@pytest.mark.parametrize("stdin", ["", "  \n\n"], ids=["empty", "blank"])
def test_an_empty_stdin_is_a_usage_error(
    stdin: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, stdin)
    assert main(["chat", "-"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "silvia chat: MESSAGE must not be empty"


def test_scenario_is_a_header_and_the_message_stays_the_users(
    server: tuple[ReferenceServer, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, url = server
    monkeypatch.setenv("SILVIA_TOKEN", "t")
    assert main(["chat", "Where do I stand?", "--scenario", "accounts", "--base-url", url]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == with_markers(reference_turn("/scenario accounts"))
    session_id = err.split("continue it with --session ")[1].split()[0]
    with SilviaClient(base_url=url, token="t") as client:
        stored = client.sessions.get(session_id)
    assert stored.title == "Where do I stand?"  # not "/scenario accounts ..."
    assert stored.messages[0].text == "Where do I stand?"


@pytest.mark.parametrize("name", ["two words", "bad\nname", "-x", "café"])
def test_a_scenario_that_cannot_be_a_name_is_a_usage_error(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["chat", "hi"], ["record", "hi", "-o", "x"]):
        assert main([*command, f"--scenario={name}"]) == 2
        err = capsys.readouterr().err
        assert err.splitlines() == [
            f"silvia {command[0]}: --scenario takes a scenario's name: letters, digits, '-', '_' "
            "and '.', a letter or digit first (see `silvia serve --list`)"
        ]


def test_an_unknown_scenario_keeps_the_servers_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "hi", "--scenario", "acounts"]) == 1
    line = capsys.readouterr().err.splitlines()[-1]
    assert "Unknown scenario 'acounts'; `silvia serve --list` lists them." in line


def test_record_streams_the_answer_to_stderr_and_takes_a_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "turn.jsonl"
    assert main(["record", "Where do I stand?", "--scenario", "accounts", "-o", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""  # stdout stays empty: the answer is shown, not piped
    answer = with_markers(reference_turn("/scenario accounts"))
    assert f"Silvia: {answer}\n" in err
    assert err.index("Silvia: ") < err.index(f"wrote {path}")  # streamed before the summary
    assert "Sources" in err
    recording = Recording.load(path)
    assert recording.request.body["message"] == "Where do I stand?"
    with recording.client() as client, client.chat.stream("again") as stream:
        turn = stream.until_done()
    assert isinstance(turn.citations[0].target, AccountsTarget)
    assert recording.reload is not None
    assert recording.reload.status == 200
