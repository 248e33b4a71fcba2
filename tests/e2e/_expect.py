"""What an end-to-end test checks: the client's turn against the scenario's `ExpectedTurn`.

The expectation is the reference server's own account of what it sends
(`expected_turn`); the client's side is whatever the SDK assembled from the
bytes on a real socket. Citations are compared in their wire form (targets
included, provider and all), so nothing the SDK drops or invents goes unseen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    IncompleteTurnError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerStreamError,
    SilviaClient,
    SilviaError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
    Turn,
)
from silvia_client.citations import Citation, InlineCitation
from silvia_client.errors import APIStatusError
from silvia_client.sessions import Session
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    ExpectedTurn,
    KeepAliveForever,
    ReferenceServer,
    Scenario,
    SendEndlessLine,
    SendGzipBomb,
    SendOversizedEvent,
    Stall,
    Trickle,
)

TOKEN = "e2e-token"
TIMEOUT = httpx.Timeout(5.0)  # connect, read, write, pool: nothing waits longer
IDLE_TIMEOUT = 5.0  # a stream's idle timeout, for scenarios that do not stall
STALL_IDLE_TIMEOUT = 0.3  # the client's idle timeout against a stalling scenario
# Against a flood: small limits; a short deadline for the floods that never end, which
# only it stops, and for those the limit stops, a generous one that proves "no hang"
# (a short one could pass first on a loaded machine, before the limit does).
FLOOD_LIMIT = 1024 * 1024
FLOOD_DEADLINE = 0.3
NO_HANG_DEADLINE = 30.0
FLOODS = (SendEndlessLine, SendOversizedEvent, SendGzipBomb)
ENDLESS = (Trickle, KeepAliveForever)

# The typed error each way a stream can stop short. A new fault kind fails loudly
# here until it is given one.
STREAM_ERRORS: dict[str, type[SilviaError]] = {
    "drop": StreamDisconnectedError,
    "stall": StreamTimeoutError,
    "error_event": ServerStreamError,
    "no_done": IncompleteTurnError,
    "endless_line": StreamTooLargeError,
    "oversized_event": StreamTooLargeError,
    "gzip_bomb": StreamTooLargeError,
    "trickle": StreamTimeoutError,
    "keep_alive_forever": StreamTimeoutError,
}
STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


def options_for(scenario: Scenario) -> dict[str, Any]:
    """The client's settings for `scenario`: a short idle timeout against a stall, and
    small limits and a short deadline against a flood; no retries (a 429 or a 500 is seen
    as such, not waited out: the retries have tests of their own)."""
    idle = STALL_IDLE_TIMEOUT if isinstance(scenario.fault, Stall) else IDLE_TIMEOUT
    options: dict[str, Any] = {"idle_timeout": idle, "max_retries": 0}
    if isinstance(scenario.fault, (*FLOODS, *ENDLESS)):
        deadline = FLOOD_DEADLINE if isinstance(scenario.fault, ENDLESS) else NO_HANG_DEADLINE
        options.update(
            deadline=deadline, max_event_bytes=FLOOD_LIMIT, max_response_bytes=FLOOD_LIMIT
        )
    return options


def shown(text: object) -> object:
    """Server text as the client shows it: the token blanked (an `EchoToken` echoes it)."""
    return text.replace(TOKEN, "<token>") if isinstance(text, str) else text


def message_for(scenario: Scenario) -> str:
    return f"/scenario {scenario.name}"


def status_error_for(status: int) -> type[APIStatusError]:
    if status >= 500:
        return InternalServerError
    return STATUS_ERRORS.get(status, APIStatusError)


def stream_error_for(expected: ExpectedTurn) -> type[SilviaError]:
    """The error a client reading `expected`'s stream must raise (it did not complete)."""
    if expected.error is not None:
        return ServerStreamError
    if expected.fault is None:
        return IncompleteTurnError  # a stream that ends short of `done` without a fault
    if expected.fault not in STREAM_ERRORS:
        raise AssertionError(f"no typed error known for fault kind {expected.fault!r}: add it")
    return STREAM_ERRORS[expected.fault]


def wire_row(citation: Citation) -> dict[str, object]:
    """A client citation as a wire row: extras kept, target in wire form, offset left out."""
    exclude = {"offset"} if isinstance(citation, InlineCitation) else None
    row = citation.model_dump(exclude=exclude, context={"include_provider": True})
    if row.get("target") is None:
        row.pop("target", None)
    return row


def expected_offsets(scenario: Scenario, count: int) -> list[int]:
    """Where each of the first `count` citations streamed (the answer's length then), read
    off the server's bytes by httpx-sse, independently of the client."""
    offsets: list[int] = []
    if not count:
        return offsets
    server = ReferenceServer()
    server.register(scenario)
    length = 0
    headers = {"authorization": "Bearer t", SCENARIO_HEADER: scenario.name}
    with (
        httpx.Client(transport=server.transport(), base_url=IN_PROCESS_URL) as http,
        http.stream("POST", "/api/claude", json={"message": "hi"}, headers=headers) as response,
    ):
        for event in EventSource(response).iter_sse():
            try:  # a malformed event is no text and no citation
                data = json.loads(event.data)
            except ValueError:
                continue
            if event.event == "text" and isinstance(data.get("text"), str):
                length += len(data["text"])
            elif event.event == "citation":
                offsets.append(length)
                if len(offsets) == count:  # before the fault, whatever it is
                    return offsets
    return offsets


def assert_turn_matches(turn: Turn, expected: ExpectedTurn, scenario: Scenario) -> None:
    """The client's turn (complete or partial) is what the scenario implies."""
    assert turn.text == expected.text
    assert turn.complete is expected.complete
    assert turn.session_id is not None
    assert turn.session_id.startswith("sess_")

    # What `target_for` must give each cited source: the summary's target if the summary
    # arrived, else that of its last streamed citation.
    targets: dict[str, object] = {}
    for row in (*expected.inline_citations, *expected.citations):
        targets[str(row["source"])] = row.get("target")
    # The summary and every streamed row as sent, each with the target it streamed with.
    assert [wire_row(c) for c in turn.citations] == list(expected.citations)
    assert [wire_row(c) for c in turn.inline_citations] == list(expected.inline_citations)
    assert [c.offset for c in turn.inline_citations] == expected_offsets(
        scenario, len(expected.inline_citations)
    )
    # target_for, per cited source, in order of first appearance.
    assert list(turn.sources) == list(targets)
    for source, target in targets.items():
        found = turn.target_for(source)
        assert (None if found is None else found.to_wire()) == target, source
    if expected.complete:
        # And they are the server's own final targets for every source cited.
        for source, target in targets.items():
            assert expected.target_for(source) == target, source

    assert [(u.event, json.loads(u.data)) for u in turn.unknown_events] == list(
        expected.unknown_events
    )
    # One malformed event where the scenario sends one; none made of half an event, cut off.
    assert len(turn.malformed_events) == (expected.fault == "malformed_event")
    if expected.error is not None:
        assert turn.error is not None
        assert turn.error.error_type == expected.error["type"]
        assert turn.error.message == shown(expected.error["message"])
    else:
        assert turn.error is None


def _key(citation: Citation) -> tuple[object, ...]:
    return (citation.source, citation.title, citation.cited_text, citation.target)


def assert_reload_agrees(turn: Turn, session: Session) -> None:
    """`sessions.get` after the turn gives the live turn's text, rows and targets as sent."""
    assert session.id == turn.session_id
    assert session.messages, "the session holds no message"
    stored = session.messages[-1]
    assert stored.role == "assistant", [m.role for m in session.messages]
    assert stored.text == turn.text
    for message in session.messages:  # rows saved before targets existed read untyped
        assert (message.citation_errors, message.inline_citation_errors) == ((), ())
    assert [_key(c) for c in stored.citations] == [_key(c) for c in turn.citations]
    # Inline citations agree too, offsets aside (a reloaded row has no stream position).
    assert [_key(c) for c in stored.inline_citations] == [_key(c) for c in turn.inline_citations]
    for source in turn.sources:
        assert stored.target_for(source) == turn.target_for(source), source


def assert_no_answer_stored(session: Session, message: str) -> None:
    """A turn that did not complete stored the question and no answer."""
    assert session.messages, "the session holds no message"
    assert session.messages[-1].role == "user"
    assert session.messages[-1].text == message


@dataclass(frozen=True)
class Played:
    """A turn on either client: the turn (partial, on a `StreamError`), the error, and the
    session reloaded after whatever turn there is."""

    turn: Turn | None
    error: SilviaError | None
    session: Session | None


async def play(client: SilviaClient | AsyncSilviaClient, message: str) -> Played:
    turn: Turn | None = None
    error: SilviaError | None = None
    try:
        if isinstance(client, SilviaClient):
            turn = client.chat.send(message)
        else:
            turn = await client.chat.send(message)
    except SilviaError as raised:
        error = raised
        turn = raised.turn if isinstance(raised, StreamError) else None
    if turn is None or turn.session_id is None:
        return Played(turn, error, None)
    if isinstance(client, SilviaClient):
        return Played(turn, error, client.sessions.get(turn.session_id))
    return Played(turn, error, await client.sessions.get(turn.session_id))
