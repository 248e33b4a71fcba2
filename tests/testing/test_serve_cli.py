"""`silvia serve`, as a user runs it (the pytest plugin is tested in `tests/e2e`)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from silvia_client.cli import main
from silvia_client.testing import BROKEN_SCENARIOS, SCENARIOS

from ._helpers import sse_events

URL_LINE = re.compile(r"Silvia reference server on (http://127\.0\.0\.1:\d+)\n")


def test_list_prints_every_scenario_with_its_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    playable = {**SCENARIOS, **BROKEN_SCENARIOS}
    assert len(lines) == len(playable)
    for line, (name, scenario) in zip(lines, playable.items(), strict=True):
        assert line.split(maxsplit=1) == [name, scenario.description]


def test_an_unknown_default_scenario_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.fixture
def serve() -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "silvia_client", "serve", "--port", "0", "--token", "cli-s3cret"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        match = URL_LINE.fullmatch(process.stdout.readline())
        assert match, "the first line names the URL"
        yield process, match.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serve_answers_on_its_url_and_stops_cleanly(
    serve: tuple[subprocess.Popen[str], str], stop: signal.Signals
) -> None:
    process, url = serve
    with httpx.Client(base_url=url, timeout=10) as client:
        refused = client.post(
            "/api/claude", json={"message": "hi"}, headers={"authorization": "Bearer x"}
        )
        with client.stream(
            "POST",
            "/api/claude",
            json={"message": "hi"},
            headers={"authorization": "Bearer cli-s3cret"},
        ) as response:
            events = sse_events(response.iter_bytes())
    assert refused.status_code == 401
    assert events[-1] == ("done", {})
    process.send_signal(stop)
    out, err = process.communicate(timeout=10)
    # SIGTERM is a service manager's stop (0); Ctrl-C a person's, "interrupted" (130).
    if stop == signal.SIGTERM:
        assert process.returncode == 0
    else:
        assert process.returncode == 130
        assert err.strip().splitlines()[-1] == "interrupted"
    assert "cli-s3cret" not in out + err
