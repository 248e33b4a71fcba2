"""Fault scenarios over real sockets: what a failed turn carries, and that nothing leaks.

`test_scenarios.py` plays every fault with both clients against its expected
turn and typed error; these add what that comparison does not see: the
malformed and unknown events' own data, an error status's body on both
endpoints, and a client that recovers with no connection left
behind.
"""

from __future__ import annotations

import json

import pytest

from silvia_client import (
    NotFoundError,
    RateLimitError,
    SilviaError,
    StreamDisconnectedError,
)
from silvia_client.citations import resolve_citation
from silvia_client.errors import APIStatusError
from silvia_client.testing import SCENARIO_HEADER, SCENARIOS, LoopbackServer

from ._expect import assert_reload_agrees, status_error_for
from .conftest import make_client, wait_until


def test_what_a_faulty_stream_carries_is_usable(loopback: LoopbackServer) -> None:
    with make_client(loopback.url) as client:
        with pytest.raises(StreamDisconnectedError) as caught:
            client.chat.send("/scenario fault-drop")
        turn = caught.value.turn
        first = resolve_citation(turn.inline_citations[0])
        assert first.href is not None
        assert first.href.startswith("/accounts/")
        assert (turn.malformed_events, turn.unknown_events) == ((), ())  # no half event read

        for scenario, event, data in [
            (
                "fault-malformed-json",
                "citation",
                '{"citation": {"source": "silvia://your-account/checking", ',
            ),
            ("fault-malformed-shape", "text", '{"text": 42}'),
        ]:
            turn = client.chat.send(f"/scenario {scenario}")
            assert turn.complete, scenario
            [malformed] = turn.malformed_events
            assert malformed.event == event, scenario
            assert malformed.data == data, scenario
            assert malformed.reason, scenario

        turn = client.chat.send("/scenario fault-unknown-event")
        [unknown] = turn.unknown_events
        assert unknown.event == "tool_progress"
        assert json.loads(unknown.data) == {"tool": "execute_sql", "status": "running"}
        assert turn.malformed_events == ()


def test_an_error_status_on_a_reload_is_its_typed_error_with_the_servers_body(
    loopback: LoopbackServer,
) -> None:
    # The chat endpoint's are checked with every scenario (test_scenarios.py). No retries.
    for scenario in ("status-401", "status-403", "status-404", "status-429", "status-500"):
        fault = SCENARIOS[scenario].fault
        headers = {SCENARIO_HEADER: scenario}
        client = make_client(loopback.url, default_headers=headers, max_retries=0)
        with client, pytest.raises(APIStatusError) as caught:
            client.sessions.get("sess_any")
        error = caught.value
        assert type(error) is status_error_for(error.status_code), scenario
        assert error.status_code == int(scenario[-3:]), scenario
        body = {"type": fault.error_type, "message": fault.message}  # type: ignore[union-attr]
        assert error.body == {"error": body}, scenario
        assert (error.request_id or "").startswith("req_"), scenario
        if isinstance(error, RateLimitError):
            assert error.retry_after == 2.0
    with make_client(loopback.url) as client, pytest.raises(NotFoundError) as unknown:
        client.sessions.get("sess_never_created")
    assert unknown.value.message == "Session not found."


def test_a_client_recovers_after_a_fault_and_its_pool_is_not_poisoned(
    loopback: LoopbackServer,
) -> None:
    with make_client(loopback.url) as client:
        for scenario in ("fault-drop", "fault-error-event", "fault-no-done"):
            with pytest.raises(SilviaError), client.chat.stream(f"/scenario {scenario}") as stream:
                stream.until_done()
            # Failed streams leave nothing behind: at most the one pooled connection.
            assert wait_until(lambda: loopback.open_connections <= 1)
        with client.chat.stream("hello") as stream:
            turn = stream.until_done()
        assert turn.complete
        assert_reload_agrees(turn, client.sessions.get(turn.session_id))  # type: ignore[arg-type]


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
