"""Every `examples/*.py` but the relay (`test_relay_fastapi.py`) runs as a user runs it.

`python examples/NAME.py` from a folder outside the repository, on the embedded reference
server and on a loopback one (`SILVIA_BASE_URL`, `SILVIA_TOKEN`), all started together:
each exits 0, printing no token nor provider.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from silvia_client.testing import ReferenceServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The relay is a server, no script that ends: test_relay_fastapi.py runs it under uvicorn.
SCRIPTS = sorted(
    p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_") and "relay" not in p.name
)
TOKEN = "examples-s3cret-token"
VENDORS = ("plaid", "snaptrade")
TIMEOUT = 120  # a hang fails the test instead of stalling the suite

Result = subprocess.CompletedProcess[str]
Results = tuple[dict[tuple[str, str], Result], dict[str, ReferenceServer]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Results]:
    elsewhere = tmp_path_factory.mktemp("cwd")  # a script needs nothing from its folder
    servers = {script: ReferenceServer(token=TOKEN) for script in SCRIPTS}
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILVIA_")}
    with ExitStack() as stack:
        urls = {script: stack.enter_context(s.serve_loopback()) for script, s in servers.items()}
        envs = {("embedded", script): env for script in SCRIPTS} | {
            ("loopback", script): {**env, "SILVIA_BASE_URL": url, "SILVIA_TOKEN": TOKEN}
            for script, url in urls.items()
        }
        running = {
            (mode, script): subprocess.Popen(
                [sys.executable, str(EXAMPLES / script)],
                cwd=elsewhere,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for (mode, script), env in envs.items()
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
        yield done, servers


def test_every_example_runs_privately_and_talks_to_silvia_base_url(runs: Results) -> None:
    results, servers = runs
    assert "quickstart.py" in SCRIPTS  # and the scripts whose facts are read below
    for (mode, script), result in results.items():
        assert result.returncode == 0, f"{script} ({mode}) failed:\n{result.stderr}"
        assert result.stdout.strip(), f"{script} printed nothing"
        shown = (result.stdout + result.stderr).lower()
        assert TOKEN.lower() not in shown, script
        assert not any(vendor in shown for vendor in VENDORS), script
    for script, server in servers.items():
        assert len(server.sessions) >= 1, f"{script} ignored SILVIA_BASE_URL"

    # A few facts the scripts print, which would change if the SDK broke under them.
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
