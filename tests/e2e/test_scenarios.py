"""Every scenario of `SCENARIOS` (a new one is tested by being added), over real sockets with
one client per side: the turn, or the typed error and its partial turn, is what `expected_turn`
implies (rows in wire form, provider and all), the reload agrees, and each recording of the
sync side (the floods aside) holds no token and replays the live turn three ways.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from silvia_client import (
    AsyncSilviaClient,
    IncompleteTurnError,
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
    SCENARIO_HEADER,
    SCENARIOS,
    Cite,
    ExpectedTurn,
    KeepAliveForever,
    LoopbackServer,
    Recording,
    RecordingTransport,
    ReferenceServer,
    ReplayServer,
    Say,
    Scenario,
    SendEndlessLine,
    SendGzipBomb,
    SendOversizedEvent,
    Stall,
    Trickle,
)

from ..testing._helpers import wait_until
from .conftest import IDLE_TIMEOUT, TIMEOUT, TOKEN, make_client

STALL_IDLE_TIMEOUT = 0.3  # the client's idle timeout against a stalling scenario
# Against a flood: small limits; a short deadline for the floods that never end, which
# only it stops, and for those the limit stops, a generous one that proves "no hang"
# (a short one could pass first on a loaded machine, before the limit does).
MiB = 1024 * 1024
FLOOD_LIMIT = 1 * MiB
LIMITS = {"max_event_bytes": FLOOD_LIMIT, "max_response_bytes": FLOOD_LIMIT}
FLOOD_DEADLINE = 0.3
NO_HANG_DEADLINE = 30.0
FLOODS = (SendEndlessLine, SendOversizedEvent, SendGzipBomb)
ENDLESS = (Trickle, KeepAliveForever)

# The typed error each way a stream can stop short (None: it ends short of `done`
# without a fault). A new fault kind fails loudly here until it is given one.
STREAM_ERRORS: dict[str | None, type[SilviaError]] = {
    None: IncompleteTurnError,
    "drop": StreamDisconnectedError,
    "stall": StreamTimeoutError,
    "error_event": ServerStreamError,
    "echo_token": ServerStreamError,
    "no_done": IncompleteTurnError,
    "endless_line": StreamTooLargeError,
    "oversized_event": StreamTooLargeError,
    "gzip_bomb": StreamTooLargeError,
    "trickle": StreamTimeoutError,
    "keep_alive_forever": StreamTimeoutError,
}


def options_for(scenario: Scenario) -> dict[str, Any]:
    """No retries (a 429 is seen, not waited out), and the settings above against a fault."""
    idle = STALL_IDLE_TIMEOUT if isinstance(scenario.fault, Stall) else IDLE_TIMEOUT
    options: dict[str, Any] = {"idle_timeout": idle, "max_retries": 0}
    if isinstance(scenario.fault, (*FLOODS, *ENDLESS)):
        deadline = FLOOD_DEADLINE if isinstance(scenario.fault, ENDLESS) else NO_HANG_DEADLINE
        options.update(deadline=deadline, **LIMITS)
    return options


def shown(text: object) -> object:
    """Server text as the client shows it: the token blanked (an `EchoToken` echoes it)."""
    return text.replace(TOKEN, "<token>") if isinstance(text, str) else text


def wire_row(citation: Citation) -> dict[str, object]:
    """A client citation as a wire row: extras kept, target in wire form, offset left out."""
    exclude = {"offset"} if isinstance(citation, InlineCitation) else None
    row = citation.model_dump(exclude=exclude, context={"include_provider": True})
    if row.get("target") is None:
        row.pop("target", None)
    return row


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
    # Where each citation streamed (the answer's length then), read off the script, not the wire.
    offsets, length = [], 0
    for item in scenario.script:
        if isinstance(item, Say):
            length += len(item.text)
        elif isinstance(item, Cite):
            offsets.append(length)
    assert [c.offset for c in turn.inline_citations] == offsets[: len(expected.inline_citations)]
    assert list(turn.sources) == list(targets)
    for source, target in targets.items():
        found = turn.target_for(source)
        assert (None if found is None else found.to_wire()) == target, source
        # And, the turn complete, they are the server's own final targets.
        assert not expected.complete or expected.target_for(source) == target, source

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


@dataclass(frozen=True)
class Played:
    """A turn on either client (partial, on a `StreamError`), its error and its reload."""

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


def _check(scenario: Scenario, expected: ExpectedTurn, played: Played) -> None:
    """The turn, or the typed error with its partial turn, and the reload of either."""
    turn, error, session = played.turn, played.error, played.session
    if expected.status != 200:
        # (The class, request id and Retry-After of each status: tests/client/test_errors.py
        # and test_retries.py; the server's head for each: test_reference_server's refusals.)
        assert turn is None
        assert isinstance(error, APIStatusError)
        assert error.status_code == expected.status
        assert expected.error is not None
        assert error.error_type == expected.error["type"]
        assert error.message == shown(expected.error["message"])
        assert error.body == {"error": {"type": error.error_type, "message": error.message}}
        return
    assert turn is not None
    assert session is not None
    assert_turn_matches(turn, expected, scenario)
    assert session.id == turn.session_id
    assert session.messages, "the session holds no message"
    stored = session.messages[-1]
    if expected.complete:  # the reload gives the live turn's text, rows and targets as sent
        assert error is None, repr(error)
        assert stored.role == "assistant", [m.role for m in session.messages]
        assert stored.text == turn.text
        for message in session.messages:  # rows saved before targets existed read untyped
            assert (message.citation_errors, message.inline_citation_errors) == ((), ())
        assert [_key(c) for c in stored.citations] == [_key(c) for c in turn.citations]
        # Inline citations agree too, offsets aside (a reloaded row has no stream position).
        inline = [_key(c) for c in turn.inline_citations]
        assert [_key(c) for c in stored.inline_citations] == inline
        for source in turn.sources:
            assert stored.target_for(source) == turn.target_for(source), source
    else:
        assert isinstance(error, STREAM_ERRORS[expected.fault]), repr(error)
        # It stored the question and no answer.
        assert stored.role == "user"
        assert stored.text == f"/scenario {scenario.name}"


def assert_same(replayed: Played, live: Played, case: str) -> None:
    """A replay gave the live turn: text, rows, targets, offsets, session, error and reload."""

    def seen(played: Played) -> tuple[object, ...]:
        turn = played.turn
        kept = turn and (turn.text, turn.citations, turn.inline_citations, turn.session_id)
        return type(played.error), kept, turn and turn.complete, played.session

    assert seen(replayed) == seen(live), case


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
                            played = await play(
                                side.with_options(**options), f"/scenario {scenario.name}"
                            )
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
    assert {"demo", "fault-drop", "fault-stall", "status-500"} <= set(recorded)  # every ending
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
    with make_client(loopback.url) as client:
        with client.chat.stream("/scenario demo") as stream:
            for event in stream:
                if event.type == "citation":
                    break
        # A body left unread cannot serve another request: closed, while the client lives on.
        assert wait_until(lambda: loopback.open_connections == 0)
        with client.chat.stream("hello") as stream:
            assert stream.until_done().complete
