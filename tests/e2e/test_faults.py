"""Fault scenarios over real sockets: each gives its typed error with what arrived, and none hangs.

Each test runs with the sync and the async client. The autouse fixture checks
that the server has no connection left once the test's clients are closed;
some tests check it sooner, while the client is still open, to show that the
failed stream's own connection was closed rather than left to the pool.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

import pytest

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    IncompleteTurnError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerStreamError,
    SilviaError,
    StreamDisconnectedError,
    StreamTimeoutError,
    Turn,
)
from silvia_client.citations import resolve_citation
from silvia_client.errors import APIStatusError
from silvia_client.testing import SCENARIO_HEADER, SCENARIOS, LoopbackServer, ReferenceServer

from ._expect import (
    STALL_IDLE_TIMEOUT,
    TIMEOUT,
    TOKEN,
    assert_reload_agrees,
    assert_turn_matches,
)
from .conftest import make_client, wait_until

MODES = pytest.mark.parametrize("mode", ["sync", "async"])


def play(
    mode: str,
    url: str,
    message: str,
    *,
    idle_timeout: float = 5.0,
    headers: Mapping[str, str] | None = None,
    token: str = TOKEN,
) -> tuple[Turn | None, SilviaError | None]:
    """One turn with a fresh client of `mode`: the turn, or the error it raised."""
    if mode == "sync":
        with make_client(
            url, idle_timeout=idle_timeout, default_headers=headers, token=token
        ) as client:
            try:
                with client.chat.stream(message) as stream:
                    return stream.until_done(), None
            except SilviaError as error:
                return None, error

    async def run() -> tuple[Turn | None, SilviaError | None]:
        async with AsyncSilviaClient(
            base_url=url,
            token=token,
            timeout=TIMEOUT,
            idle_timeout=idle_timeout,
            default_headers=headers,
        ) as client:
            try:
                async with client.chat.stream(message) as stream:
                    return await stream.until_done(), None
            except SilviaError as error:
                return None, error

    return asyncio.run(run())


def fails(
    mode: str, url: str, scenario: str, kind: type[SilviaError], **kwargs: object
) -> SilviaError:
    turn, error = play(mode, url, f"/scenario {scenario}", **kwargs)  # type: ignore[arg-type]
    assert turn is None
    assert isinstance(error, kind), repr(error)
    return error


def _session_after(reference: ReferenceServer, error: SilviaError) -> object:
    turn = getattr(error, "turn", None)
    assert turn is not None
    assert turn.session_id is not None
    return reference.sessions.body(turn.session_id)


@MODES
def test_a_drop_mid_event_is_a_disconnect_carrying_what_arrived(
    mode: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    error = fails(mode, loopback.url, "fault-drop", StreamDisconnectedError)
    turn = error.turn  # type: ignore[attr-defined]
    assert_turn_matches(turn, reference.expected_turn("fault-drop"), SCENARIOS["fault-drop"])
    # What arrived is usable: text, and citations with their targets and links.
    assert not turn.complete
    assert turn.text
    assert turn.inline_citations
    assert turn.citations == ()
    first = resolve_citation(turn.inline_citations[0])
    assert first.href is not None
    assert first.href.startswith("/accounts/")
    # The half event was not read as an event.
    assert turn.malformed_events == ()
    assert turn.unknown_events == ()


@MODES
def test_a_stall_is_a_timeout_carrying_what_arrived(
    mode: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    error = fails(
        mode, loopback.url, "fault-stall", StreamTimeoutError, idle_timeout=STALL_IDLE_TIMEOUT
    )
    expected = reference.expected_turn("fault-stall", idle_timeout=STALL_IDLE_TIMEOUT)
    turn = error.turn  # type: ignore[attr-defined]
    assert_turn_matches(turn, expected, SCENARIOS["fault-stall"])
    assert turn.text
    assert not turn.complete
    # The server, 300 s into its stall, noticed the client leave and freed the connection
    # (checked by the autouse fixture); the question is stored, the answer is not.
    stored = _session_after(reference, error)
    assert isinstance(stored, dict)
    assert [m["role"] for m in stored["messages"]] == ["user"]


@MODES
@pytest.mark.parametrize(
    ("scenario", "event", "data"),
    [
        (
            "fault-malformed-json",
            "citation",
            '{"citation": {"source": "silvia://your-account/checking", ',
        ),
        ("fault-malformed-shape", "text", '{"text": 42}'),
    ],
)
def test_a_malformed_event_is_kept_on_the_turn_and_the_turn_completes(
    mode: str,
    scenario: str,
    event: str,
    data: str,
    reference: ReferenceServer,
    loopback: LoopbackServer,
) -> None:
    turn, error = play(mode, loopback.url, f"/scenario {scenario}")
    assert error is None, repr(error)
    assert turn is not None
    assert_turn_matches(turn, reference.expected_turn(scenario), SCENARIOS[scenario])
    assert turn.complete
    [malformed] = turn.malformed_events
    assert (malformed.event, malformed.data) == (event, data)
    assert malformed.reason


@MODES
def test_an_unknown_event_is_kept_with_its_name_and_data(
    mode: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    turn, error = play(mode, loopback.url, "/scenario fault-unknown-event")
    assert error is None, repr(error)
    assert turn is not None
    assert turn.complete
    [unknown] = turn.unknown_events
    assert unknown.event == "tool_progress"
    assert json.loads(unknown.data) == {"tool": "execute_sql", "status": "running"}
    assert turn.malformed_events == ()


@MODES
def test_an_in_band_error_is_a_server_stream_error_carrying_what_arrived(
    mode: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    error = fails(mode, loopback.url, "fault-error-event", ServerStreamError)
    assert isinstance(error, ServerStreamError)
    assert error.error_type == "overloaded_error"
    assert "overloaded" in str(error)
    turn = error.turn
    expected = reference.expected_turn("fault-error-event")
    assert_turn_matches(turn, expected, SCENARIOS["fault-error-event"])
    assert turn.error is not None
    assert not turn.complete
    assert turn.text
    assert turn.inline_citations


@MODES
def test_a_stream_ending_without_done_is_incomplete_though_everything_else_arrived(
    mode: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    error = fails(mode, loopback.url, "fault-no-done", IncompleteTurnError)
    turn = error.turn  # type: ignore[attr-defined]
    expected = reference.expected_turn("fault-no-done")
    assert_turn_matches(turn, expected, SCENARIOS["fault-no-done"])
    # Everything but `done`: the whole text, the summary with final targets.
    assert turn.text == reference.expected_turn("demo").text
    assert len(turn.citations) == 5
    assert not turn.complete
    stored = _session_after(reference, error)
    assert isinstance(stored, dict)
    assert [m["role"] for m in stored["messages"]] == ["user"]


STATUSES = [
    ("status-401", AuthenticationError, 401),
    ("status-403", PermissionDeniedError, 403),
    ("status-404", NotFoundError, 404),
    ("status-429", RateLimitError, 429),
    ("status-500", InternalServerError, 500),
]


@MODES
@pytest.mark.parametrize(("scenario", "kind", "status"), STATUSES, ids=[s[0] for s in STATUSES])
def test_an_error_status_on_chat_is_its_typed_error_with_the_servers_message(
    mode: str,
    scenario: str,
    kind: type[APIStatusError],
    status: int,
    loopback: LoopbackServer,
) -> None:
    error = fails(mode, loopback.url, scenario, kind)
    assert isinstance(error, APIStatusError)
    fault = SCENARIOS[scenario].fault
    assert error.status_code == status
    assert error.error_type == fault.error_type  # type: ignore[union-attr]
    assert error.message == fault.message  # type: ignore[union-attr]
    assert error.request_id is not None
    assert error.request_id.startswith("req_")
    assert error.body == {"error": {"type": error.error_type, "message": error.message}}
    if isinstance(error, RateLimitError):
        assert error.retry_after == 2.0


@pytest.mark.parametrize(("scenario", "kind", "status"), STATUSES, ids=[s[0] for s in STATUSES])
def test_an_error_status_on_the_session_endpoint_is_its_typed_error(
    scenario: str, kind: type[APIStatusError], status: int, loopback: LoopbackServer
) -> None:
    # The header picks a status scenario for the session endpoint too. No retries,
    # so a 429 or a 500 is seen as such rather than waited out.
    headers = {SCENARIO_HEADER: scenario}
    client = make_client(loopback.url, default_headers=headers, max_retries=0)
    with client, pytest.raises(kind) as caught:
        client.sessions.get("sess_any")
    assert caught.value.status_code == status
    if isinstance(caught.value, RateLimitError):
        assert caught.value.retry_after == 2.0


def test_a_session_the_server_never_saw_is_not_found(loopback: LoopbackServer) -> None:
    with make_client(loopback.url) as client, pytest.raises(NotFoundError) as caught:
        client.sessions.get("sess_never_created")
    assert caught.value.message == "Session not found."


@MODES
def test_a_token_the_server_does_not_accept_is_an_authentication_error(mode: str) -> None:
    server = ReferenceServer(token="the-right-token")
    with server.serve_loopback() as url:
        error = fails(mode, url, "demo", AuthenticationError, token="a-wrong-token")
        assert "a-wrong-token" not in str(error)
        assert "the-right-token" not in str(error)
        turn, ok = play(mode, url, "hello", token="the-right-token")
        assert ok is None
        assert turn is not None
        assert turn.complete


def test_a_client_recovers_after_a_fault_and_its_pool_is_not_poisoned(
    reference: ReferenceServer, loopback: LoopbackServer
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
