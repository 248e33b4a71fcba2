"""Every scenario of the library, end to end over real sockets, with the sync and async client.

One test per client goes through every scenario of `SCENARIOS` (a new scenario
is tested by being added there): the turn the client assembles is what
`expected_turn` says the scenario implies, and reloading the session gives the
same citations and targets. A scenario that fails gives its typed error,
carrying what arrived. A failure names its scenario; after each scenario no
connection is left open on the server.
"""

from __future__ import annotations

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


def _check_reload(scenario: Scenario, expected: ExpectedTurn, turn: Turn, session: Session) -> None:
    if expected.complete:
        assert_reload_agrees(turn, session)
    else:
        assert_no_answer_stored(session, message_for(scenario))


def _each_scenario_closed(name: str, loopback: LoopbackServer) -> None:
    # The client lives on: at most its one pooled connection, nothing a fault left behind.
    assert wait_until(lambda: loopback.open_connections <= 1), (
        f"scenario {name!r}: {loopback.open_connections} connection(s) left open on the server"
    )


# One client per side, each scenario on a `with_options` copy: a new client per
# scenario spent most of the test reading the CA bundle into its SSL context.
def test_every_scenario_sync(reference: ReferenceServer, loopback: LoopbackServer) -> None:
    with make_client(loopback.url) as client:
        for name in SCENARIOS:
            try:
                _scenario_sync(name, reference, client)
            except Exception as error:
                raise AssertionError(f"scenario {name!r} (sync client)") from error
            _each_scenario_closed(name, loopback)


@pytest.mark.anyio
async def test_every_scenario_async(reference: ReferenceServer, loopback: LoopbackServer) -> None:
    async with AsyncSilviaClient(base_url=loopback.url, token=TOKEN, timeout=TIMEOUT) as client:
        for name in SCENARIOS:
            try:
                await _scenario_async(name, reference, client)
            except Exception as error:
                raise AssertionError(f"scenario {name!r} (async client)") from error
            _each_scenario_closed(name, loopback)


def _scenario_sync(name: str, reference: ReferenceServer, client: SilviaClient) -> None:
    scenario = SCENARIOS[name]
    options = options_for(scenario)
    expected = reference.expected_turn(name, idle_timeout=options["idle_timeout"], token=TOKEN)
    turn: Turn | None = None
    error: SilviaError | None = None
    client = client.with_options(**options)
    try:
        with client.chat.stream(message_for(scenario)) as stream:
            turn = stream.until_done()
    except SilviaError as raised:
        error = raised
    checked = _check_outcome(scenario, expected, turn, error)
    if checked is not None:
        assert checked.session_id is not None
        _check_reload(scenario, expected, checked, client.sessions.get(checked.session_id))


async def _scenario_async(name: str, reference: ReferenceServer, client: AsyncSilviaClient) -> None:
    scenario = SCENARIOS[name]
    options = options_for(scenario)
    expected = reference.expected_turn(name, idle_timeout=options["idle_timeout"], token=TOKEN)
    turn: Turn | None = None
    error: SilviaError | None = None
    client = client.with_options(**options)
    try:
        async with client.chat.stream(message_for(scenario)) as stream:
            turn = await stream.until_done()
    except SilviaError as raised:
        error = raised
    checked = _check_outcome(scenario, expected, turn, error)
    if checked is not None:
        assert checked.session_id is not None
        session = await client.sessions.get(checked.session_id)
        _check_reload(scenario, expected, checked, session)


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
