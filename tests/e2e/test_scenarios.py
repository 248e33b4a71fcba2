"""Every scenario of the library, end to end over real sockets, with the sync and async client.

One test goes through every scenario of `SCENARIOS` with both clients (a new scenario
is tested by being added there): the turn the client assembles is what
`expected_turn` says the scenario implies, and reloading the session gives the
same citations and targets. A scenario that fails gives its typed error,
carrying what arrived. A failure names its scenario; after each scenario no
connection is left open on the server.
"""

from __future__ import annotations

from typing import Any

import pytest

from silvia_client import AsyncSilviaClient, SilviaClient, SilviaError, StreamError, Turn
from silvia_client.errors import APIStatusError, RateLimitError
from silvia_client.sessions import Session
from silvia_client.testing import SCENARIOS, ExpectedTurn, LoopbackServer, ReferenceServer, Scenario

from ._expect import (
    TIMEOUT,
    TOKEN,
    assert_no_answer_stored,
    assert_reload_agrees,
    assert_turn_matches,
    message_for,
    options_for,
    shown,
    status_error_for,
    stream_error_for,
)
from .conftest import make_client, wait_until


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


def _check_outcome(
    scenario: Scenario,
    expected: ExpectedTurn,
    turn: Turn | None,
    error: SilviaError | None,
) -> Turn | None:
    """The turn, or the typed error with its partial turn; the turn to check the reload by."""
    if expected.status != 200:
        assert turn is None
        assert error is not None
        _check_status_error(error, expected)
        return None
    if expected.complete:
        assert error is None, repr(error)
        assert turn is not None
        assert_turn_matches(turn, expected, scenario)
        return turn
    assert isinstance(error, stream_error_for(expected)), repr(error)
    assert isinstance(error, StreamError)
    assert_turn_matches(error.turn, expected, scenario)
    return error.turn


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
                for side in ("sync", "async"):
                    try:
                        turn, error, session = await play(
                            client if side == "sync" else aclient, scenario, options
                        )
                        checked = _check_outcome(scenario, expected, turn, error)
                        if checked is not None:
                            assert session is not None
                            if expected.complete:
                                assert_reload_agrees(checked, session)
                            else:
                                assert_no_answer_stored(session, message_for(scenario))
                    except Exception as failure:
                        raise AssertionError(f"scenario {name!r} ({side} client)") from failure
                    # The clients live on: at most their one pooled connection each.
                    assert wait_until(lambda: loopback.open_connections <= 2), name


async def play(
    client: SilviaClient | AsyncSilviaClient, scenario: Scenario, options: dict[str, Any]
) -> tuple[Turn | None, SilviaError | None, Session | None]:
    """The turn or the error, and the reloaded session of whatever turn there is."""
    turn: Turn | None = None
    error: SilviaError | None = None
    copy = client.with_options(**options)
    try:
        if isinstance(copy, SilviaClient):
            turn = copy.chat.send(message_for(scenario))
        else:
            turn = await copy.chat.send(message_for(scenario))
    except SilviaError as raised:
        error = raised
    whole = turn or (error.turn if isinstance(error, StreamError) else None)
    if whole is None or whole.session_id is None:
        return turn, error, None
    if isinstance(copy, SilviaClient):
        return turn, error, copy.sessions.get(whole.session_id)
    return turn, error, await copy.sessions.get(whole.session_id)


def test_a_legacy_session_keeps_its_old_rows_untyped_beside_the_new_typed_turn(
    loopback: LoopbackServer,
) -> None:
    with make_client(loopback.url) as client:
        with client.chat.stream("/scenario legacy-session") as stream:
            turn = stream.until_done()
        assert turn.session_id is not None
        session = client.sessions.get(turn.session_id)
    _, old_answer, question, answer = session.messages
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    # Saved before targets existed: no target, read as such (no error), source and title kept.
    assert old_answer.citations
    assert all(c.target is None for c in (*old_answer.citations, *old_answer.inline_citations))
    assert old_answer.citation_errors == ()
    assert old_answer.citations[0].source == "silvia://your-account/checking"
    assert old_answer.citations[0].title == "Checking"
    # The turn of this request, typed, as it streamed.
    assert question.text == "/scenario legacy-session"
    assert_reload_agrees(turn, session)
    assert all(c.target is not None for c in answer.citations)
