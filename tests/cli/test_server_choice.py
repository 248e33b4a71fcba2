"""Which server each command talks to: `--base-url`, else `SILVIA_BASE_URL`, else embedded.

Every command that talks to a server says on stderr which one it used, and
never prints a token, a password or a query string doing so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.cli import main
from silvia_client.testing import ReferenceServer

TOKEN = "choice-s3cret-token"
EMBEDDED = (
    "no --base-url and no SILVIA_BASE_URL: using the embedded reference server "
    "(in this process, made-up data)"
)


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


@pytest.fixture
def server() -> ReferenceServer:
    return ReferenceServer(token=TOKEN)


@pytest.fixture
def loopback(server: ReferenceServer) -> Iterator[str]:
    with server.serve_loopback() as url:
        yield url


def _script(tmp_path: Path) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"prompts": [{"message": "hi", "scenario": "demo"}]}))
    return str(path)


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command that talks to a server, by the name it gives itself."""
    return {
        "chat": ["chat", "hi"],
        "record": ["record", "hi", "-o", str(tmp_path / "turn.jsonl")],
        "qa run": ["qa", "run", _script(tmp_path)],
    }


@pytest.mark.parametrize("name", ["chat", "record", "qa run"])
def test_with_neither_the_embedded_server_is_used_and_said(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_commands(tmp_path)[name]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"silvia {name}: {EMBEDDED}"


@pytest.mark.parametrize("name", ["chat", "record", "qa run"])
def test_the_environment_is_followed_and_said(
    name: str,
    tmp_path: Path,
    loopback: str,
    server: ReferenceServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", loopback)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    assert main(_commands(tmp_path)[name]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"silvia {name}: using {loopback} (from SILVIA_BASE_URL)"
    assert len(server.sessions) == 1  # the turn was played there, not in this process
    assert TOKEN not in err


@pytest.mark.parametrize("name", ["chat", "record", "qa run", "session show"])
def test_the_flag_wins_over_the_environment_and_no_secret_is_printed(
    name: str,
    tmp_path: Path,
    loopback: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    argv = _commands(tmp_path).get(name, ["session", "show", "nope"])
    main([*argv, "--base-url", f"{loopback}/"])
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == f"silvia {name}: using {loopback}/ (from --base-url)"
    assert TOKEN not in out + err


@pytest.mark.parametrize("url", ["{url}/?key=query-secret", "{url}/#frag-secret", "{url}?"])
def test_a_query_or_a_fragment_is_a_usage_error_that_does_not_repeat_them(
    url: str, loopback: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "hi", "--base-url", url.format(url=loopback)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "silvia chat: --base-url must not have a query (?) or a fragment (#)\n"


@pytest.mark.parametrize("name", ["chat", "record", "qa run", "session show"])
def test_credentials_in_the_url_are_a_usage_error_that_does_not_repeat_them(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "https://alice:pa55word@staging.example")
    argv = _commands(tmp_path).get(name, ["session", "show", "nope"])
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    prefix = "qa" if name == "qa run" else name  # `silvia qa` says its usage errors as one
    assert err == (
        f"silvia {prefix}: SILVIA_BASE_URL must not hold credentials (user:password@): "
        "the token goes in SILVIA_TOKEN\n"
    )


def test_qa_run_follows_silvia_base_url_and_a_wrong_token_does_not_pass(
    tmp_path: Path,
    loopback: str,
    server: ReferenceServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Staging exported with a wrong token: the run must not pass on some other server.
    monkeypatch.setenv("SILVIA_BASE_URL", loopback)
    monkeypatch.setenv("SILVIA_TOKEN", "wrong-" + TOKEN)
    status = main(["qa", "run", _script(tmp_path)])
    out, err = capsys.readouterr()
    assert status != 0
    assert server.sessions == {}
    assert f"against {loopback}" in out
    assert "embedded" not in err
