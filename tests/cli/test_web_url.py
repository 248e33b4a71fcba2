"""`--web-url` and `SILVIA_WEB_URL`: the web app's origin, for the account links commands print."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from silvia_client.cli import main
from silvia_client.testing import ReferenceServer

TOKEN = "cli-web-url-token"
CHECKING = "/accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


@pytest.mark.parametrize("argv", [["chat", "How much is in checking?"], ["demo", "--pace", "0"]])
def test_silvia_web_url_is_the_default_and_the_flag_wins(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    assert f"      {CHECKING}\n" in capsys.readouterr().out
    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"      https://app.example{CHECKING}\n" in out
    assert " /accounts/" not in out
    assert main([*argv, "--web-url", "http://localhost:3000"]) == 0
    assert f"      http://localhost:3000{CHECKING}\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["chat", "hi"], "chat"),
        (["session", "show", "s1"], "session show"),
        (["demo", "--pace", "0"], "demo"),
    ],
)
def test_a_bad_silvia_web_url_is_a_usage_error(
    argv: list[str],
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_WEB_URL", "javascript:alert(1)")
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"silvia {command}: SILVIA_WEB_URL must be an absolute http(s) URL\n"
    assert main([*argv, "--web-url", "data:x"]) == 2  # a flag is checked as itself
    assert (
        capsys.readouterr().err == f"silvia {command}: --web-url must be an absolute http(s) URL\n"
    )


@pytest.fixture
def loopback() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


def test_session_show_takes_the_web_url_from_the_setting(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    monkeypatch.setenv("SILVIA_BASE_URL", loopback)
    assert main(["chat", "How much is in checking?"]) == 0
    session_id = capsys.readouterr().err.rsplit("--session ", 1)[1].strip()
    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    assert main(["session", "show", session_id]) == 0
    out = capsys.readouterr().out
    assert f"      https://app.example{CHECKING}\n" in out
    assert main(["session", "show", session_id, "--web-url", "https://web.example"]) == 0
    assert f"      https://web.example{CHECKING}\n" in capsys.readouterr().out
