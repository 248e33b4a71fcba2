"""Which server each command talks to: `--base-url`, else `SILVIA_BASE_URL`, else embedded.

Every command that talks to a server says on stderr which one it used, and never
prints a token, a password or a query string doing so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

from ._cli import TOKEN, run

EMBEDDED = (
    "no --base-url and no SILVIA_BASE_URL: using the embedded reference server "
    "(in this process, made-up data)"
)


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command that talks to a server, by the name it gives itself."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"prompts": [{"message": "hi", "scenario": "demo"}]}))
    return {
        "chat": ["chat", "hi"],
        "record": ["record", "hi", "-o", str(tmp_path / "turn.jsonl")],
        "qa run": ["qa", "run", str(script)],
    }


def test_the_flag_else_the_environment_else_the_embedded_server_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = _commands(tmp_path)
    for name, argv in commands.items():
        status, _, err = run(argv, capsys)
        assert status == 0, err
        assert err.splitlines()[0] == f"silvia {name}: {EMBEDDED}"

    server = ReferenceServer(token=TOKEN)
    with server.serve_loopback() as url:
        monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
        monkeypatch.setenv("SILVIA_BASE_URL", url)
        for played, (name, argv) in enumerate(commands.items(), start=1):
            status, out, err = run(argv, capsys)
            assert status == 0, err
            assert err.splitlines()[0] == f"silvia {name}: using {url} (from SILVIA_BASE_URL)"
            assert len(server.sessions) == played  # the turn was played there, not in this process
            assert TOKEN not in out + err

        monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
        for name, argv in {**commands, "session show": ["session", "show", "nope"]}.items():
            _, out, err = run([*argv, "--base-url", f"{url}/"], capsys)
            assert err.splitlines()[0] == f"silvia {name}: using {url}/ (from --base-url)"
            assert TOKEN not in out + err

        # Staging exported with a wrong token: the run must not pass on some other server.
        monkeypatch.setenv("SILVIA_BASE_URL", url)
        monkeypatch.setenv("SILVIA_TOKEN", "wrong-" + TOKEN)
        played = len(server.sessions)
        status, out, err = run(commands["qa run"], capsys)
        assert status != 0
        assert len(server.sessions) == played  # none more
        assert f"against {url}" in out
        assert "embedded" not in err


def test_a_url_with_credentials_a_query_or_a_fragment_is_a_usage_error_that_hides_them(
    loopback: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    refused = "--base-url must not have a query (?) or a fragment (#)"
    for url in (f"{loopback}/?key=query-secret", f"{loopback}/#frag-secret", f"{loopback}?"):
        assert run(["chat", "hi", "--base-url", url], capsys) == (
            2,
            "",
            f"silvia chat: {refused}\n",
        )
    monkeypatch.setenv("SILVIA_BASE_URL", "https://alice:pa55word@staging.example")
    for name, argv in {**_commands(tmp_path), "session show": ["session", "show", "nope"]}.items():
        prefix = "qa" if name == "qa run" else name  # `silvia qa` says its usage errors as one
        assert run(argv, capsys) == (
            2,
            "",
            f"silvia {prefix}: SILVIA_BASE_URL must not hold credentials (user:password@): "
            "the token goes in SILVIA_TOKEN\n",
        )
