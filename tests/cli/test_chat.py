"""`silvia chat`, `silvia session show` and `silvia demo`'s output, as a user runs them.

In-process through `main(argv)`, on the embedded reference server or a loopback
one; once as `python -m silvia_client`, the entry point.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ._cli import CHECKING, TOKEN, private, reference_turn, run, session_of, with_markers

QUESTION = "How much is in checking?"


def test_chat_streams_the_answer_with_markers_then_the_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(["chat", QUESTION], capsys)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == with_markers(reference_turn(QUESTION))
    assert lines[1:] == [
        "",
        "Sources",
        "  [1] Checking (your account)",
        f"      {CHECKING}",
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
    assert private(out, err)

    status, out, _ = run(["chat", "/scenario search-web rates?"], capsys)
    assert out.splitlines()[-3:] == [
        "  [1] Today's mortgage rates (web page)",
        "      https://www.freddiemac.com/pmms",
        "  [2] Search summary (no target: shown by its source and title)",
    ]
    status, out, _ = run(["chat", "/scenario no-citations hi"], capsys)
    assert out.endswith("\n\nNo sources cited.\n")
    assert "[1]" not in out


def test_the_web_url_makes_account_links_absolute(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["chat", QUESTION], ["demo", "--pace", "0"]):
        monkeypatch.delenv("SILVIA_WEB_URL", raising=False)
        status, out, err = run(argv, capsys)
        assert status == 0
        assert f"      {CHECKING}\n" in out, argv
        assert private(out, err), argv  # `silvia demo` names no provider either
        monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
        out = run(argv, capsys)[1]
        assert f"      https://app.example{CHECKING}\n" in out, argv
        assert " /accounts/" not in out
        out = run([*argv, "--web-url", "http://localhost:3000"], capsys)[1]
        assert f"      http://localhost:3000{CHECKING}\n" in out, argv  # the flag wins


def test_a_status_error_is_one_line_on_stderr_and_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for scenario, error in [
        ("status-500", "InternalServerError: 500: Internal server error."),
        ("status-401", "AuthenticationError: 401: Invalid bearer token."),
    ]:
        status, out, err = run(["chat", f"/scenario {scenario} hi"], capsys)
        assert (status, out) == (1, ""), scenario
        [note, line] = err.splitlines()
        assert "embedded reference server" in note
        assert line.startswith(f"silvia chat: {error}"), line


def test_a_stream_that_fails_keeps_what_arrived_and_lists_its_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(["chat", "/scenario fault-error-event hi"], capsys)
    assert status == 1
    assert out.startswith("You have $4,210.55 in checking[1]")
    assert "\nSources\n  [1] Checking (your account)\n" in out
    assert err.splitlines()[-1].startswith("silvia chat: ServerStreamError: ")
    assert private(out, err)


def test_usage_errors_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    absolute = "must be an absolute http(s) URL"
    cases = [
        (["chat", "hi", "--base-url", "ftp://x"], f"silvia chat: --base-url {absolute}"),
        (["chat", "hi", "--web-url", "javascript:x"], f"silvia chat: --web-url {absolute}"),
        (
            ["session", "show", "s1", "--web-url", "data:x"],
            f"silvia session show: --web-url {absolute}",
        ),
        (["demo", "--web-url", "data:x"], f"silvia demo: --web-url {absolute}"),
        (["chat", "   "], "silvia chat: MESSAGE must not be empty"),
        (
            ["session", "show", "sess_1"],
            "silvia session show: no --base-url and no SILVIA_BASE_URL: name the server to ask "
            "(the embedded reference server keeps nothing between runs)",
        ),
    ]
    for argv, line in cases:
        assert run(argv, capsys) == (2, "", line + "\n"), argv
    monkeypatch.setenv("SILVIA_WEB_URL", "javascript:alert(1)")
    for argv, command in [(["chat", "hi"], "chat"), (["demo"], "demo")]:
        assert run(argv, capsys) == (2, "", f"silvia {command}: SILVIA_WEB_URL {absolute}\n")
    monkeypatch.delenv("SILVIA_WEB_URL")
    monkeypatch.setenv("SILVIA_BASE_URL", "not a url")
    for argv, command in [
        (["chat", "hi"], "chat"),
        (["session", "show", "s1"], "session show"),
        (["record", "hi", "-o", "never.jsonl"], "record"),
    ]:
        assert run(argv, capsys) == (2, "", f"silvia {command}: SILVIA_BASE_URL {absolute}\n")


def test_chat_then_session_show_on_a_real_socket(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    status, chat_out, chat_err = run(["chat", QUESTION, "--base-url", loopback], capsys)
    assert status == 0
    assert "embedded" not in chat_err
    session_id = session_of(chat_err)

    monkeypatch.setenv("SILVIA_BASE_URL", loopback)  # the environment's URL serves as well
    status, _, err = run(
        ["chat", "/scenario market-data and stocks?", "--session", session_id], capsys
    )
    assert status == 0
    assert "embedded" not in err

    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    status, out, err = run(["session", "show", session_id], capsys)
    assert status == 0
    assert err == f"silvia session show: using {loopback} (from SILVIA_BASE_URL)\n"
    blocks = out.split("\n\n")
    assert blocks[0] == f"Session {session_id}: {QUESTION}"
    assert blocks[1] == f"You: {QUESTION}"
    first_answer = chat_out.split("\n\n")[0]
    # History rows carry no offsets: the text without markers, and the same sources.
    assert blocks[2] == "Silvia: " + re.sub(r"\[\d\]", "", first_answer)
    sources = chat_out.split("\n\n", 1)[1].rstrip("\n")
    assert blocks[3] == sources.replace(" /accounts/", " https://app.example/accounts/")
    assert blocks[4] == "You: /scenario market-data and stocks?"
    assert blocks[5] == "Silvia: Apple is at $227.48 and Microsoft at $415.10."
    assert blocks[6].splitlines() == [
        "Sources",
        "  [1] AAPL (market data)",
        "  [2] MSFT (market data)",
    ]
    assert private(chat_out, chat_err, out, err)
    out = run(["session", "show", session_id, "--web-url", "https://web.example"], capsys)[1]
    assert f"      https://web.example{CHECKING}\n" in out


def test_python_dash_m_is_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "silvia_client", "chat", QUESTION],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "TERM": "xterm"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == with_markers(reference_turn(QUESTION))
    assert f"      {CHECKING}\n" in result.stdout
    assert "embedded reference server" in result.stderr
