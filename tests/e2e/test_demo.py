"""`silvia demo`, run the way a new user runs it: a fresh process, no network, no settings."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from silvia_client.testing import SCENARIOS, expected_turn

PROVIDERS = re.compile(r"plaid|snaptrade", re.IGNORECASE)


def _demo(*args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    # No SILVIA_* settings but `settings`, and no proxy: the demo needs neither.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SILVIA_") and "proxy" not in key.lower()
    }
    env.update(settings)
    return subprocess.run(
        [sys.executable, "-m", "silvia_client", "demo", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # a guard against a hang, not a bound on speed
        check=False,
    )


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return _demo("--pace", "0")


EMBEDDED_LINE = (
    "silvia demo: playing on the embedded reference server (in this process, made-up data); "
    "it never talks to an API server\n"
)


def test_the_demo_succeeds_and_says_only_which_server_it_plays_on(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert demo.returncode == 0, demo.stderr
    assert demo.stderr == EMBEDDED_LINE


def test_the_demo_plays_on_the_embedded_server_whatever_the_environment_says() -> None:
    # An API server in the environment (nothing listens on port 9) is not asked.
    run = _demo("--pace", "0", SILVIA_BASE_URL="http://127.0.0.1:9", SILVIA_TOKEN="t")
    assert run.returncode == 0, run.stderr
    assert run.stderr == EMBEDDED_LINE


def test_the_answer_carries_a_marker_per_source_where_each_citation_streamed(
    demo: subprocess.CompletedProcess[str],
) -> None:
    text = expected_turn(SCENARIOS["demo"]).text
    answer = next(line for line in demo.stdout.splitlines() if line.startswith("Silvia: "))
    # The answer is the turn's text with [1]..[5] inserted, in order of first appearance.
    assert re.findall(r"\[(\d+)\]", answer) == ["1", "2", "3", "4", "5"]
    assert re.sub(r"\[\d+\]", "", answer) == "Silvia: " + text
    assert "checking[1]" in answer


def test_the_sources_are_numbered_with_their_resolved_links(
    demo: subprocess.CompletedProcess[str],
) -> None:
    out = demo.stdout
    sources = out[out.index("\nSources\n") :]
    assert re.search(
        r"\[1\] Checking \(your account\)\n\s+/accounts/vzeNDwK7KQIm4yEog683u", sources
    )
    # Both cards behind one label: one link each.
    assert sources.count("/accounts/") == 3
    assert "[3] AAPL (market data)" in sources
    assert "https://www.bankrate.com/" in sources
    assert "[5] IRA contribution limits (tax document)" in sources
    assert "https://www.irs.gov/retirement-plans/ira-contribution-limits" in sources


def test_the_reload_agrees_with_the_live_turn(demo: subprocess.CompletedProcess[str]) -> None:
    last = demo.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(r"Reloaded session sess_\w+: live and reload agree \(.*\)", last), last


def test_no_provider_is_ever_printed(demo: subprocess.CompletedProcess[str]) -> None:
    assert not PROVIDERS.search(demo.stdout + demo.stderr)
    assert "manual" not in (demo.stdout + demo.stderr).lower()


@pytest.mark.parametrize(
    ("args", "settings"),
    [
        (("--web-url", "https://app.example.com"), {}),
        ((), {"SILVIA_WEB_URL": "https://app.example.com"}),
        (("--web-url", "https://app.example.com"), {"SILVIA_WEB_URL": "https://other.example"}),
    ],
)
def test_a_web_url_makes_account_links_absolute(
    args: tuple[str, ...], settings: dict[str, str]
) -> None:
    run = _demo("--pace", "0", *args, **settings)
    assert run.returncode == 0, run.stderr
    assert "https://app.example.com/accounts/vzeNDwK7KQIm4yEog683u" in run.stdout
    assert not re.search(r"^\s+/accounts/", run.stdout, re.MULTILINE)


@pytest.mark.parametrize("args", [("--base-url", "https://app.example.com"), ("--base-url",)])
def test_base_url_is_a_usage_error_that_points_to_web_url(args: tuple[str, ...]) -> None:
    # --base-url means the API server, which the demo never uses; it once meant the web app.
    run = _demo("--pace", "0", *args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("usage: silvia demo")
    assert "use --web-url" in run.stderr


def test_a_typed_error_is_a_message_on_stderr_and_exit_1() -> None:
    run = _demo("--pace", "0", "--scenario", "fault-drop")
    assert run.returncode == 1
    assert run.stderr.startswith(EMBEDDED_LINE + "silvia demo: StreamDisconnectedError: ")
    assert "Sources" not in run.stdout
    assert not PROVIDERS.search(run.stdout + run.stderr)


def test_bad_arguments_exit_2() -> None:
    assert _demo("--web-url", "javascript:alert(1)").returncode == 2
    bad_setting = _demo(SILVIA_WEB_URL="app.example.com")
    assert bad_setting.returncode == 2
    assert bad_setting.stderr == "silvia demo: SILVIA_WEB_URL must be an absolute http(s) URL\n"
    assert _demo("--scenario", "no-such-scenario").returncode == 2
    assert _demo("--pace", "-1").returncode == 2
