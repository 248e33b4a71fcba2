"""`silvia demo`, run the way a new user runs it: a fresh process, no network, no settings.
(The answer's markers and sources as rendered: tests/cli/test_chat.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ..cli._cli import reference_turn, run, with_markers

PROVIDERS = re.compile(r"plaid|snaptrade|manual", re.IGNORECASE)
EMBEDDED_LINE = (
    "silvia demo: playing on the embedded reference server (in this process, made-up data); "
    "it never talks to an API server\n"
)


def test_the_demo_plays_its_turn_and_reload_and_exits_2_on_misuse_1_on_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No token and no proxy: the demo needs neither; an API server's URL (nothing listens
    # on port 9) is not asked.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SILVIA_") and "proxy" not in key.lower()
    }
    env["SILVIA_BASE_URL"] = "http://127.0.0.1:9"
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
    answer = with_markers(reference_turn("the demo scenario"))
    assert f"\nSilvia: {answer}\n\nSources\n  [1] Checking (your account)\n" in demo.stdout
    last = demo.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(r"Reloaded session sess_\w+: live and reload agree \(.*\)", last), last
    # In-process: misuse exits 2 (--pace and --web-url: tests/cli/test_arguments.py and
    # test_chat.py); --base-url means the API server, which the demo never uses.
    for args in [("--base-url", "https://app.example.com"), ("--base-url",)]:
        status, out, err = run(["demo", "--pace", "0", *args], capsys)
        assert (status, out) == (2, ""), args
        assert err.startswith("usage: silvia demo"), args
        assert "use --web-url" in err, args
    assert run(["demo", "--scenario", "nope"], capsys)[0] == 2
    status, out, err = run(["demo", "--pace", "0", "--scenario", "fault-drop"], capsys)
    assert status == 1
    assert err.startswith(EMBEDDED_LINE + "silvia demo: StreamDisconnectedError: ")
    assert "Sources" not in out
    assert not PROVIDERS.search(out + err)
