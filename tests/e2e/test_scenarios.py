"""Every scenario of the library, end to end over real sockets, with the sync and async client.

One test goes through every scenario of `SCENARIOS` with both clients (a new scenario
is tested by being added there): the turn the client assembles is what
`expected_turn` says the scenario implies, and reloading the session gives the
same citations and targets. A scenario that fails gives its typed error,
carrying what arrived; one client per side plays them all, so each recovers
from every fault. A failure names its scenario; after each scenario no
connection is left open on the server. Then a stream left early (an error status on
a reload is `tests/client/test_errors.py`'s and, on the wire, `tests/testing`'s).
"""

from __future__ import annotations

import pytest

from silvia_client import AsyncSilviaClient, RateLimitError
from silvia_client.errors import APIStatusError
from silvia_client.testing import (
    SCENARIOS,
    ExpectedTurn,
    LoopbackServer,
    ReferenceServer,
    Scenario,
)

from ..testing._helpers import wait_until
from ._expect import (
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


# One client per side, each scenario on a `with_options` copy: a new client per
# scenario spent most of the test reading the CA bundle into its SSL context.
@pytest.mark.anyio
async def test_every_scenario(reference: ReferenceServer, loopback: LoopbackServer) -> None:
    async with AsyncSilviaClient(base_url=loopback.url, token=TOKEN, timeout=TIMEOUT) as aclient:
        with make_client(loopback.url) as client:
            for name, scenario in SCENARIOS.items():
                options = options_for(scenario)
                idle = options["idle_timeout"]
                expected = reference.expected_turn(name, idle_timeout=idle, token=TOKEN)
                for side in (client, aclient):
                    try:
                        played = await play(side.with_options(**options), message_for(scenario))
                        _check(scenario, expected, played)
                    except Exception as failure:
                        raise AssertionError(f"scenario {name!r} ({type(side)})") from failure
                    # The clients live on: at most their one pooled connection each.
                    assert wait_until(lambda: loopback.open_connections <= 2), name


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
