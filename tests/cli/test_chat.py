"""`silvia chat` and `silvia session show`, as a user runs them.

In-process through `main(argv)` (stdout and stderr captured), against the
embedded reference server or a loopback one on 127.0.0.1; once as
`python -m silvia_client`, to check the module is the same command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.chat import Turn
from silvia_client.cli import build_parser, main
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer

TOKEN = "cli-s3cret-token"
VENDORS = ("plaid", "snaptrade")
ACCOUNT_LINK = re.compile(r"/accounts/[A-Za-z0-9%_.!~*'()-]+")


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


def reference_turn(message: str) -> Turn:
    """The turn the embedded server plays for `message`, read with the SDK directly."""
    server = ReferenceServer()
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
        client.chat.stream(message) as stream,
    ):
        return stream.until_done()


def with_markers(turn: Turn) -> str:
    """The answer with `[n]` inserted where each citation streamed in (one per source there)."""
    numbers: dict[str, int] = {}
    inserts: dict[int, list[int]] = {}
    for citation in turn.inline_citations:
        number = numbers.setdefault(citation.source, len(numbers) + 1)
        assert citation.offset is not None
        here = inserts.setdefault(citation.offset, [])
        if number not in here:
            here.append(number)
    out, start = [], 0
    for offset in sorted(inserts):
        out.append(turn.text[start:offset] + "".join(f"[{n}]" for n in inserts[offset]))
        start = offset
    return "".join(out) + turn.text[start:]


def assert_private(*outputs: str) -> None:
    for output in outputs:
        assert TOKEN not in output
        for vendor in VENDORS:
            assert vendor not in output.lower()


# --help ------------------------------------------------------------------------------


def _subcommands() -> list[list[str]]:
    parser = build_parser()
    commands: list[list[str]] = [[]]
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        assert isinstance(action.choices, dict)  # a subparsers action: name -> parser
        for name, sub in action.choices.items():
            commands.append([name])
            for inner in sub._subparsers._group_actions if sub._subparsers else []:
                commands.extend([name, inner_name] for inner_name in inner.choices)
    return commands


@pytest.mark.parametrize("command", _subcommands(), ids=lambda c: " ".join(c) or "silvia")
def test_help_everywhere_exits_0(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: silvia" in capsys.readouterr().out


def test_the_new_commands_are_listed() -> None:
    assert {("chat",), ("session",), ("session", "show")} <= {tuple(c) for c in _subcommands()}


# silvia chat, embedded server -------------------------------------------------------------


def test_chat_streams_the_answer_with_markers_then_the_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["chat", "How much is in checking?"]) == 0
    out, err = capsys.readouterr()
    turn = reference_turn("How much is in checking?")
    lines = out.splitlines()
    assert lines[0] == with_markers(turn)
    assert lines[1:3] == ["", "Sources"]
    assert lines[3:] == [
        "  [1] Checking (your account)",
        "      /accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D",
        "  [2] Credit card (2 of your accounts)",
        "      Credit card (1 of 2): /accounts/qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5",
        "      Credit card (2 of 2): /accounts/Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2",
        "  [3] AAPL (market data)",
        "  [4] Best high-yield savings accounts (web page)",
        "      https://www.bankrate.com/banking/savings/best-high-yield-savings-accounts/",
        "  [5] IRA contribution limits (tax document)",
        "      https://www.irs.gov/retirement-plans/ira-contribution-limits",
    ]
    assert "embedded reference server" in err
    assert re.search(r"session \S+; continue it with --session \S+", err)
    assert "\x1b" not in out  # not a terminal: plain links
    assert_private(out, err)


def test_chat_lists_untyped_sources_by_title_without_a_link(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["chat", "/scenario search-web rates?"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-3:] == [
        "  [1] Today's mortgage rates (web page)",
        "      https://www.freddiemac.com/pmms",
        "  [2] Search summary (no target: shown by its source and title)",
    ]


def test_chat_with_no_citations_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "/scenario no-citations hi"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n\nNo sources cited.\n")
    assert "[1]" not in out


def test_web_url_makes_account_links_absolute(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "hi", "--web-url", "https://app.example"]) == 0
    out = capsys.readouterr().out
    assert "      https://app.example/accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D" in out
    assert " /accounts/" not in out


@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ("status-500", "InternalServerError: 500: Internal server error."),
        ("status-401", "AuthenticationError: 401: Invalid bearer token."),
        ("status-429", "RateLimitError: 429: Too many requests."),
    ],
)
def test_a_status_error_is_one_line_on_stderr_and_exit_1(
    scenario: str, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", f"/scenario {scenario} hi"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    [note, line] = err.splitlines()
    assert "embedded reference server" in note
    assert line.startswith(f"silvia chat: {error}")


def test_a_stream_that_fails_keeps_what_arrived_and_lists_its_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["chat", "/scenario fault-error-event hi"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("You have $4,210.55 in checking[1]")
    assert "\nSources\n  [1] Checking (your account)\n" in out
    assert err.splitlines()[-1].startswith("silvia chat: ServerStreamError: ")
    assert_private(out, err)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["chat", "hi", "--base-url", "ftp://x"], "--base-url must be an absolute http(s) URL"),
        (["chat", "hi", "--web-url", "javascript:x"], "--web-url must be an absolute http(s) URL"),
        (["chat", "   "], "MESSAGE must not be empty"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == f"silvia chat: {problem}\n"


@pytest.mark.parametrize("argv", [["chat", "hi"], ["session", "show", "s1"], ["record", "hi"]])
def test_a_bad_base_url_in_the_environment_is_a_usage_error(
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "not a url")
    if argv[0] == "record":
        argv = [*argv, "-o", str(tmp_path / "r.jsonl")]
    assert main(argv) == 2
    command = " ".join(argv[:2]) if argv[0] == "session" else argv[0]
    assert capsys.readouterr() == (
        "",
        f"silvia {command}: SILVIA_BASE_URL must be an absolute http(s) URL\n",
    )


# Against a loopback server ---------------------------------------------------------------


@pytest.fixture
def loopback() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


def test_chat_then_session_show_on_a_real_socket(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    assert main(["chat", "How much is in checking?", "--base-url", loopback]) == 0
    chat_out, chat_err = capsys.readouterr()
    assert "embedded" not in chat_err
    session_id = re.search(r"--session (\S+)", chat_err).group(1)  # type: ignore[union-attr]

    monkeypatch.setenv("SILVIA_BASE_URL", loopback)  # the environment's URL serves as well
    assert main(["chat", "/scenario market-data and stocks?", "--session", session_id]) == 0
    assert "embedded" not in capsys.readouterr().err

    assert main(["session", "show", session_id]) == 0
    out, err = capsys.readouterr()
    assert err == f"silvia session show: using {loopback} (from SILVIA_BASE_URL)\n"
    blocks = out.split("\n\n")
    assert blocks[0] == f"Session {session_id}: How much is in checking?"
    assert blocks[1] == "You: How much is in checking?"
    first_answer = chat_out.split("\n\n")[0]
    # History rows carry no offsets: the text without markers, and the same sources.
    assert blocks[2] == "Silvia: " + re.sub(r"\[\d\]", "", first_answer)
    assert blocks[3] == chat_out.split("\n\n", 1)[1].rstrip("\n")
    assert blocks[4] == "You: /scenario market-data and stocks?"
    assert blocks[5] == "Silvia: Apple is at $227.48 and Microsoft at $415.10."
    assert blocks[6].splitlines() == [
        "Sources",
        "  [1] AAPL (market data)",
        "  [2] MSFT (market data)",
    ]
    assert_private(chat_out, chat_err, out, err)


def test_session_show_with_a_wrong_token_is_one_line(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "wrong-" + TOKEN)
    assert main(["session", "show", "s1", "--base-url", loopback]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    [chosen, line] = err.splitlines()
    assert chosen == f"silvia session show: using {loopback} (from --base-url)"
    assert line.startswith("silvia session show: AuthenticationError: 401: Invalid bearer token.")
    assert "wrong-" not in err


def test_session_show_needs_a_server_the_embedded_one_keeps_no_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["session", "show", "sess_1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "silvia session show: no --base-url and no SILVIA_BASE_URL: name the server to ask "
        "(the embedded reference server keeps nothing between runs)\n"
    )


def test_python_dash_m_is_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "silvia_client", "chat", "How much is in checking?"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "TERM": "xterm"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == with_markers(reference_turn("How much is in checking?"))
    assert ACCOUNT_LINK.search(result.stdout)
    assert "embedded reference server" in result.stderr
