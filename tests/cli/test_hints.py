"""The command line names its own ways in (`SILVIA_TOKEN`, `--base-url`), not Python arguments.

A 401 from a server that wants a token: with `SILVIA_TOKEN` unset, and with a
wrong one, for each command that talks to a server. The client's own message,
which Python users read, still says `token=...`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client import AuthenticationError, ConfigurationError, SilviaClient
from silvia_client.cli import main
from silvia_client.cli._hints import AUTH_HINT_REFUSED, AUTH_HINT_UNSET, terminal_message
from silvia_client.testing import ReferenceServer

TOKEN = "hints-s3cret-token"


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


COMMANDS = {
    "chat": ["chat", "hi"],
    "record": ["record", "hi", "-o", "turn.jsonl"],
    "session show": ["session", "show", "sess_1"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("token", [None, "a-wrong-token-value"], ids=["unset", "wrong"])
def test_a_401_names_silvia_token_not_a_python_argument(
    command: str,
    token: str | None,
    server_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    if token is not None:
        monkeypatch.setenv("SILVIA_TOKEN", token)
    assert main([*COMMANDS[command], "--base-url", server_url]) == 1
    out, err = capsys.readouterr()
    line = err.splitlines()[-1]
    assert line.startswith(f"silvia {command}: AuthenticationError: 401: ")
    said = "Missing bearer token." if token is None else "Invalid bearer token."
    assert said in line  # the server's own words stay
    assert (AUTH_HINT_UNSET if token is None else AUTH_HINT_REFUSED) in line
    assert "token=" not in err
    assert "(request id req_" in line
    assert TOKEN not in out + err
    if token is not None:
        assert token not in out + err


def test_the_clients_own_message_is_left_for_python_users(server_url: str) -> None:
    with (
        SilviaClient(base_url=server_url) as client,
        pytest.raises(AuthenticationError) as caught,
    ):
        client.sessions.get("sess_1")
    assert "token=" in str(caught.value)  # a hint for Python code, as the client words it
    assert "token=" not in terminal_message(caught.value)
    assert AUTH_HINT_UNSET in terminal_message(caught.value)


def test_the_embedded_server_playing_a_401_gets_no_token_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["chat", "hi", "--scenario", "status-401"]) == 1
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("silvia chat: AuthenticationError: 401: ")
    assert "SILVIA_TOKEN" not in line  # its token is the command's own: nothing to set
    assert "token=" not in line


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            "no base URL: pass base_url=... or set the SILVIA_BASE_URL environment variable",
            "no base URL: pass --base-url or set SILVIA_BASE_URL",
        ),
        (
            "base_url must not hold credentials (user:password@): "
            "pass the token as token=... or in SILVIA_TOKEN",
            "base_url must not hold credentials (user:password@): put the token in SILVIA_TOKEN",
        ),
        ("web_url=... is not a URL", "--web-url is not a URL"),
        ("a message with no hint", "a message with no hint"),
    ],
)
def test_other_hints_are_said_as_the_command_line_says_them(message: str, said: str) -> None:
    assert terminal_message(ConfigurationError(message)) == said
