"""The command line names its own ways in (`SILVIA_TOKEN`, `--base-url`), not Python arguments.

A 401 from a server that wants a token, with `SILVIA_TOKEN` unset and with a wrong
one, for each command that talks to a server; the client's own message, which
Python users read, still says `token=...`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from silvia_client import AuthenticationError, ConfigurationError, SilviaClient
from silvia_client.cli._hints import AUTH_HINT_REFUSED, AUTH_HINT_UNSET, terminal_message

from ._cli import TOKEN, run


def test_a_401_names_silvia_token_not_a_python_argument(
    loopback: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    commands = {
        "chat": ["chat", "hi"],
        "record": ["record", "hi", "-o", "turn.jsonl"],
        "session show": ["session", "show", "sess_1"],
    }
    for token, said, hint in [
        (None, "Missing bearer token.", AUTH_HINT_UNSET),
        ("a-wrong-token-value", "Invalid bearer token.", AUTH_HINT_REFUSED),
    ]:
        if token is not None:
            monkeypatch.setenv("SILVIA_TOKEN", token)
        for command, argv in commands.items():
            status, out, err = run([*argv, "--base-url", loopback], capsys)
            assert status == 1, command
            line = err.splitlines()[-1]
            assert line.startswith(f"silvia {command}: AuthenticationError: 401: "), line
            assert said in line  # the server's own words stay
            assert hint in line
            assert "token=" not in err
            assert "(request id req_" in line
            assert TOKEN not in out + err
            assert token is None or token not in out + err

    monkeypatch.delenv("SILVIA_TOKEN")
    with SilviaClient(base_url=loopback) as client, pytest.raises(AuthenticationError) as caught:
        client.sessions.get("sess_1")
    assert "token=" in str(caught.value)  # a hint for Python code, as the client words it
    assert "token=" not in terminal_message(caught.value)
    assert AUTH_HINT_UNSET in terminal_message(caught.value)

    # From the embedded server a 401 is a scenario playing one: its token is the command's own.
    line = run(["chat", "hi", "--scenario", "status-401"], capsys)[2].splitlines()[-1]
    assert line.startswith("silvia chat: AuthenticationError: 401: ")
    assert "SILVIA_TOKEN" not in line
    assert "token=" not in line


def test_other_hints_are_said_as_the_command_line_says_them() -> None:
    for message, said in [
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
    ]:
        assert terminal_message(ConfigurationError(message)) == said
