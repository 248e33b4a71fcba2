"""Every scenario of the library, end to end over real sockets, with the sync and async client.

One test goes through every scenario of `SCENARIOS` with both clients (a new scenario
is tested by being added there): the turn the client assembles is what
`expected_turn` says the scenario implies, and reloading the session gives the
same citations and targets. A scenario that fails gives its typed error,
carrying what arrived; one client per side plays them all, so each recovers
from every fault. A failure names its scenario; after each scenario no
connection is left open on the server. The sync side records each turn (the floods
aside): its file holds no token and replays the live turn three ways. Then a stream
left early (an error status on a reload is `tests/client/test_errors.py`'s and, on the
wire, `tests/testing`'s).
"""

from __future__ import annotations

import httpx
import pytest

from silvia_client import AsyncSilviaClient, RateLimitError
from silvia_client.errors import APIStatusError
from silvia_client.testing import (
    SCENARIO_HEADER,
    SCENARIOS,
    ExpectedTurn,
    LoopbackServer,
    Recording,
    RecordingTransport,
    ReferenceServer,
    ReplayServer,
    Scenario,
)

from ..testing._helpers import wait_until
from ._expect import (
    ENDLESS,
    FLOODS,
    STALL_IDLE_TIMEOUT,
    TIMEOUT,
    TOKEN,
    Played,
    assert_no_answer_stored,
    assert_reload_agrees,
    assert_turn_matches,
    message_for,
    options_for,
    play,
    shown,
    status_error_for,
    stream_error_for,
)
from .conftest import make_client


def _check_status_error(error: BaseException, expected: ExpectedTurn) -> None:
    assert isinstance(error, status_error_for(expected.status))
    assert isinstance(error, APIStatusError)
    assert error.status_code == expected.status
    assert expected.error is not None
    assert error.error_type == expected.error["type"]
    assert error.message == shown(expected.error["message"])
    assert error.request_id is not None
    assert error.request_id.startswith("req_")
    assert error.body == {"error": {"type": error.error_type, "message": error.message}}
    if isinstance(error, RateLimitError):
        assert error.retry_after == expected.retry_after


def _check(scenario: Scenario, expected: ExpectedTurn, played: Played) -> None:
    """The turn, or the typed error with its partial turn, and the reload of either."""
    turn, error, session = played.turn, played.error, played.session
    if expected.status != 200:
        assert turn is None
        assert error is not None
        _check_status_error(error, expected)
        return
    assert turn is not None
    assert session is not None
    assert_turn_matches(turn, expected, scenario)
    if expected.complete:
        assert error is None, repr(error)
        assert_reload_agrees(turn, session)
    else:
        assert isinstance(error, stream_error_for(expected)), repr(error)
        assert_no_answer_stored(session, message_for(scenario))


def assert_same(replayed: Played, live: Played, case: str) -> None:
    """A replay gave the live turn: text, rows, targets, offsets, session, error and reload."""
    assert type(replayed.error) is type(live.error), case
    assert (replayed.turn is None) is (live.turn is None), case
    if live.turn is not None:
        assert replayed.turn is not None
        assert replayed.turn.text == live.turn.text, case
        assert replayed.turn.citations == live.turn.citations, case
        assert replayed.turn.inline_citations == live.turn.inline_citations, case
        assert replayed.turn.session_id == live.turn.session_id, case
        assert replayed.turn.complete is live.turn.complete, case
    assert replayed.session == live.session, case


# One client per side, each scenario on a `with_options` copy: a new client per
# scenario spent most of the test reading the CA bundle into its SSL context.
@pytest.mark.anyio
async def test_every_scenario(reference: ReferenceServer, loopback: LoopbackServer) -> None:
    recorder = RecordingTransport()  # around the sync client's pool: each turn is recorded too
    recorded: dict[str, tuple[Played, Recording]] = {}
    async with AsyncSilviaClient(base_url=loopback.url, token=TOKEN, timeout=TIMEOUT) as aclient:
        http = httpx.Client(transport=recorder)
        with http, make_client(loopback.url, http_client=http) as client:
            for name, scenario in SCENARIOS.items():
                options = options_for(scenario)
                idle = options["idle_timeout"]
                expected = reference.expected_turn(name, idle_timeout=idle, token=TOKEN)
                for side in (client, aclient):
                    try:
                        with recorder.capture() as capture:
                            played = await play(side.with_options(**options), message_for(scenario))
                        _check(scenario, expected, played)
                    except Exception as failure:
                        raise AssertionError(f"scenario {name!r} ({type(side)})") from failure
                    # The clients live on: at most their one pooled connection each.
                    assert wait_until(lambda: loopback.open_connections <= 2), name
                    if side is client and not isinstance(scenario.fault, (*FLOODS, *ENDLESS)):
                        kept = capture.recording()
                        assert kept is not None, name
                        recorded[name] = (played, Recording.loads(kept.dumps()))

    # Each recording, through its file's text, replays the live turn with both clients
    # and on a socket (the `ReplayServer` of `silvia serve --replay`), and holds no token.
    replays = ReplayServer({name: recording for name, (_, recording) in recorded.items()})
    with (
        replays.serve_loopback() as url,
        make_client(url, idle_timeout=STALL_IDLE_TIMEOUT, max_retries=0) as served,
    ):
        for name, (live, recording) in recorded.items():
            assert TOKEN not in recording.dumps(), name
            with recording.client() as replay:
                assert_same(await play(replay, "whatever is asked"), live, name)
            async with recording.async_client() as areplay:
                assert_same(await play(areplay, "whatever is asked"), live, name)
            picked = served.with_options(default_headers={SCENARIO_HEADER: name})
            assert_same(await play(picked, "anything"), live, f"{name} (replay server)")


def test_leaving_a_stream_early_closes_its_connection(loopback: LoopbackServer) -> None:
    with make_client(loopback.url) as client:
        with client.chat.stream("/scenario demo") as stream:
            for event in stream:
                if event.type == "citation":
                    break
        # A body left unread cannot serve another request: closed, while the client lives on.
        assert wait_until(lambda: loopback.open_connections == 0)
        with client.chat.stream("hello") as stream:
            assert stream.until_done().complete
