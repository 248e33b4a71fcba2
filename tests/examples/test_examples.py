"""Every `examples/*.py` runs: on the embedded reference server, and on a loopback one.

Each script runs as a user runs it (`python examples/NAME.py`, a subprocess):
once with no `SILVIA_BASE_URL` (the embedded reference server), once with
`SILVIA_BASE_URL` and `SILVIA_TOKEN` pointing at a reference server on
127.0.0.1, as against a real server. Each must exit 0 and print neither the
token nor a provider. The scripts start together (they are independent) and
each test checks one result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))
TOKEN = "examples-s3cret-token"
VENDORS = ("plaid", "snaptrade")
TIMEOUT = 120  # a hang fails the test instead of stalling the suite

Result = subprocess.CompletedProcess[str]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILVIA_")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def results() -> Iterator[dict[tuple[str, str], Result]]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        modes = {
            "embedded": _env(),
            "loopback": _env(SILVIA_BASE_URL=url, SILVIA_TOKEN=TOKEN),
        }
        running = {
            (mode, script): subprocess.Popen(
                [sys.executable, script],
                cwd=EXAMPLES,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for mode, env in modes.items()
            for script in SCRIPTS
        }
        done: dict[tuple[str, str], Result] = {}
        try:
            for key, process in running.items():
                out, err = process.communicate(timeout=TIMEOUT)
                done[key] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        finally:
            for process in running.values():
                if process.poll() is None:
                    process.kill()
                    process.communicate()
        yield done


def test_the_examples_are_there() -> None:
    expected = {
        "quickstart.py",
        "stream_turn.py",
        "stream_turn_async.py",
        "rehydrate_session.py",
        "resolve_links.py",
        "match_accounts.py",
    }
    assert expected <= set(SCRIPTS)
    assert (EXAMPLES / "citations_tour.ipynb").is_file()


@pytest.mark.parametrize("mode", ["embedded", "loopback"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs(script: str, mode: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(mode, script)]
    assert result.returncode == 0, f"{script} ({mode}) failed:\n{result.stderr}"
    assert result.stdout.strip(), f"{script} printed nothing"
    shown = result.stdout + result.stderr
    assert TOKEN not in shown
    for vendor in VENDORS:
        assert vendor not in shown.lower()
    if "from _client import" in (EXAMPLES / script).read_text(encoding="utf-8"):
        on_reference = "embedded reference server" in result.stderr
        assert on_reference is (mode == "embedded")


def test_the_examples_find_what_they_show(results: dict[tuple[str, str], Result]) -> None:
    """A few facts the scripts print, which would change if the SDK broke under them."""
    for mode in ("embedded", "loopback"):
        assert "live and reload agree: citations True, inline citations True" in (
            results[(mode, "rehydrate_session.py")].stdout
        )
        matched = results[(mode, "match_accounts.py")].stdout
        assert "Checking: Everyday Checking" in matched
        assert "Credit card: all of Sapphire Preferred, Freedom Unlimited" in matched
        links = results[(mode, "resolve_links.py")].stdout
        assert (
            '"href": "https://app.example.com/accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"'
            in links
        )
        assert "legacy 'javascript:alert(1)': label 'Not a link', href None" in links
        assert "Both complete: True" in results[(mode, "stream_turn_async.py")].stdout
        assert "complete: True" in results[(mode, "stream_turn.py")].stdout
