"""Record on 127.0.0.1, replay three ways, and get the live turn back.

Each scenario is played through a `RecordingTransport` on a server with one
exact token, saved, and replayed by `Recording.client()`, `.async_client()` and
the files' `ReplayServer` on a socket (what `silvia serve --replay` runs): each
gives the live turn (text, rows, targets, offsets, session, `complete`), the
same error, the same reload, and no file holds the token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.testing import (
    SCENARIO_HEADER,
    Recording,
    RecordingTransport,
    ReferenceServer,
    ReplayServer,
)

from ._expect import TIMEOUT, Played, play

TOKEN = "round-trip-s3cret-token-7f3a"
IDLE_TIMEOUT = 0.5  # the live stall ends after this; nothing else waits near it

SCENARIOS = [
    "demo",
    "accounts",
    "pooling",
    "untyped-ids-then-none",
    "checkpoint-legacy",
    "fault-drop",
    "fault-stall",
    "fault-error-event",
    "fault-no-done",
    "fault-malformed-json",
    "status-500",
]


OPTIONS: dict[str, Any] = {"timeout": TIMEOUT, "idle_timeout": IDLE_TIMEOUT, "max_retries": 0}


def assert_same(replayed: Played, live: Played, case: str = "") -> None:
    assert type(replayed.error) is type(live.error), case
    assert (replayed.turn is None) is (live.turn is None), case
    if live.turn is not None:
        assert replayed.turn is not None
        assert replayed.turn.text == live.turn.text, case
        assert replayed.turn.citations == live.turn.citations, case  # rows, targets and all
        assert replayed.turn.inline_citations == live.turn.inline_citations, case  # offsets too
        assert replayed.turn.session_id == live.turn.session_id, case
        assert replayed.turn.complete is live.turn.complete, case
    assert replayed.session == live.session, case


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback(port=0) as url:
        yield url


@pytest.fixture(scope="module")
def recorded(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Played, Path]]:
    """Each scenario's live outcome and its recording's file."""
    directory = tmp_path_factory.mktemp("recordings")
    results = {}
    recorder = RecordingTransport()
    http = httpx.Client(transport=recorder)
    with http, SilviaClient(base_url=server_url, token=TOKEN, http_client=http, **OPTIONS) as c:
        for scenario in SCENARIOS:
            with recorder.capture() as capture:
                live = asyncio.run(play(c, f"/scenario {scenario}"))
            recording = capture.recording()
            assert recording is not None
            path = directory / f"{scenario}.jsonl"
            recording.save(path)
            results[scenario] = (live, path)
    return results


@pytest.fixture(scope="module")
def replay_url(recorded: dict[str, tuple[Played, Path]]) -> Iterator[str]:
    files = [str(path) for _, path in recorded.values()]
    # And a redacted copy of the demo, served as `demo-redacted`.
    _, demo = recorded["demo"]
    redacted = demo.with_name("demo-redacted.jsonl")
    Recording.load(demo).redacted().save(redacted)
    files.append(str(redacted))
    # What `silvia serve --replay FILE...` serves (its command line: tests/cli/test_serve.py).
    with ReplayServer.from_files(files).serve_loopback() as url:
        yield url


@pytest.mark.anyio
async def test_every_recording_replays_the_live_turn_three_ways_and_holds_no_token(
    recorded: dict[str, tuple[Played, Path]], replay_url: str
) -> None:
    # So that the comparisons compare something: complete turns, partial ones, errors.
    demo, dropped, failed = (recorded[name][0] for name in ("demo", "fault-drop", "status-500"))
    assert demo.turn is not None
    assert demo.turn.complete
    assert demo.session is not None
    assert dropped.error is not None
    assert dropped.turn is not None
    assert dropped.turn.inline_citations
    assert failed.turn is None
    # One client on the replay server, a copy per scenario: each new one reads the CA bundle.
    with SilviaClient(base_url=replay_url, token="any", **OPTIONS) as served:
        for scenario, (live, path) in recorded.items():
            assert TOKEN.encode() not in path.read_bytes(), scenario
            with Recording.load(path).client(idle_timeout=IDLE_TIMEOUT) as client:
                assert_same(await play(client, "whatever is asked"), live, scenario)
            async with Recording.load(path).async_client(idle_timeout=IDLE_TIMEOUT) as aclient:
                assert_same(await play(aclient, "whatever is asked"), live, scenario)
            picked = served.with_options(default_headers={SCENARIO_HEADER: scenario})
            assert_same(await play(picked, "anything"), live, f"{scenario} (replay server)")
        # The replay server picks by message, defaults to the first, serves a redacted copy.
        assert_same(await play(served, "/recording accounts"), recorded["accounts"][0])
        assert_same(await play(served, "no name"), recorded[SCENARIOS[0]][0])
        shared = await play(served, "/recording demo-redacted")
    assert shared.turn is not None
    assert shared.turn.text == demo.turn.text
    kinds = [c.target.kind if c.target else None for c in shared.turn.citations]
    assert kinds == [c.target.kind if c.target else None for c in demo.turn.citations]
    assert shared.session is not None
