"""Fault scenarios over real sockets: what a failed turn carries, and that nothing leaks.

`test_scenarios.py` plays every fault with both clients against its expected
turn and typed error (one client each, so also recovering from each), and the
unknown events' data; these add what that comparison does not see: the
malformed events' own data, an error status's body on a reload, and a stream
left early.
"""

from __future__ import annotations

import pytest

from silvia_client import (
    NotFoundError,
    RateLimitError,
    StreamDisconnectedError,
)
from silvia_client.citations import resolve_citation
from silvia_client.errors import APIStatusError
from silvia_client.testing import SCENARIO_HEADER, SCENARIOS, LoopbackServer

from ._expect import status_error_for
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
