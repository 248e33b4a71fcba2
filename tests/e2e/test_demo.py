"""`silvia demo`, run the way a new user runs it: a fresh process, no network, no settings."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from silvia_client.testing import SCENARIOS, expected_turn

from ..cli._cli import run

PROVIDERS = re.compile(r"plaid|snaptrade", re.IGNORECASE)


EMBEDDED_LINE = (
    "silvia demo: playing on the embedded reference server (in this process, made-up data); "
    "it never talks to an API server\n"
)


def test_the_demo_plays_the_turn_with_markers_linked_sources_and_its_reload() -> None:
    # No SILVIA_* settings and no proxy: the demo needs neither.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SILVIA_") and "proxy" not in key.lower()
    }
    demo = subprocess.run(
        [sys.executable, "-m", "silvia_client", "demo", "--pace", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # a guard against a hang, not a bound on speed
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert demo.stderr == EMBEDDED_LINE  # it says only which server it plays on
    assert not PROVIDERS.search(demo.stdout + demo.stderr)
    assert "manual" not in (demo.stdout + demo.stderr).lower()
    text = expected_turn(SCENARIOS["demo"]).text
    out = demo.stdout
    answer = next(line for line in out.splitlines() if line.startswith("Silvia: "))
    # The answer is the turn's text with [1]..[5] inserted, in order of first appearance.
    assert re.findall(r"\[(\d+)\]", answer) == ["1", "2", "3", "4", "5"]
    assert re.sub(r"\[\d+\]", "", answer) == "Silvia: " + text
    assert "checking[1]" in answer
    sources = out[out.index("\nSources\n") :]
    assert re.search(
        r"\[1\] Checking \(your account\)\n\s+/accounts/vzeNDwK7KQIm4yEog683u", sources
    )
    assert sources.count("/accounts/") == 3  # both cards behind one label: one link each
    assert "[3] AAPL (market data)" in sources
    assert "https://www.bankrate.com/" in sources
    assert "[5] IRA contribution limits (tax document)" in sources
    assert "https://www.irs.gov/retirement-plans/ira-contribution-limits" in sources
    last = out.rstrip().splitlines()[-1]
    assert re.fullmatch(r"Reloaded session sess_\w+: live and reload agree \(.*\)", last), last


def test_usage_errors_exit_2_and_a_typed_error_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (--pace and --web-url: tests/cli/test_arguments.py and test_chat.py.)
    # --base-url means the API server, which the demo never uses; it once meant the web app.
    for args in [("--base-url", "https://app.example.com"), ("--base-url",)]:
        status, out, err = run(["demo", "--pace", "0", *args], capsys)
        assert (status, out) == (2, ""), args
        assert err.startswith("usage: silvia demo"), args
        assert "use --web-url" in err, args
    assert run(["demo", "--scenario", "nope"], capsys)[0] == 2
    # An API server in the environment (nothing listens on port 9) is not asked.
    monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SILVIA_TOKEN", "t")
    assert run(["demo", "--pace", "0"], capsys)[::2] == (0, EMBEDDED_LINE)
    status, out, err = run(["demo", "--pace", "0", "--scenario", "fault-drop"], capsys)
    assert status == 1
    assert err.startswith(EMBEDDED_LINE + "silvia demo: StreamDisconnectedError: ")
    assert "Sources" not in out
    assert not PROVIDERS.search(out + err)
