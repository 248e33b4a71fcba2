"""The fault scenarios: a server that breaks the stream, answers with an error, or is hostile."""

from __future__ import annotations

from ._faults import (
    DropMidEvent,
    EchoToken,
    EndWithoutDone,
    HttpError,
    KeepAliveForever,
    SendEndlessLine,
    SendError,
    SendGzipBomb,
    SendMalformed,
    SendOversizedEvent,
    SendUnknown,
    Stall,
    Trickle,
)
from ._library_data import (
    DEMO_SCRIPT,
)
from ._scenario import Scenario


def faults() -> list[Scenario]:
    return [
        Scenario(
            "fault-drop",
            "The connection drops in the middle of an event, after a citation has streamed.",
            script=DEMO_SCRIPT,
            fault=DropMidEvent(after_events=12),
        ),
        Scenario(
            "fault-stall",
            "The stream stalls for 300 s mid-turn, longer than any client idle timeout.",
            script=DEMO_SCRIPT,
            fault=Stall(seconds=300.0, after_events=12),
        ),
        Scenario(
            "fault-malformed-json",
            "A `citation` event whose data is not valid JSON, mid-turn.",
            script=DEMO_SCRIPT,
            fault=SendMalformed(after_events=12),
        ),
        Scenario(
            "fault-malformed-shape",
            "A `text` event whose data is valid JSON of the wrong shape, mid-turn.",
            script=DEMO_SCRIPT,
            fault=SendMalformed(event="text", data='{"text": 42}', after_events=12),
        ),
        Scenario(
            "fault-unknown-event",
            "An event name the contract does not define, mid-turn; the turn still completes.",
            script=DEMO_SCRIPT,
            fault=SendUnknown(after_events=12),
        ),
        Scenario(
            "fault-error-event",
            "An in-band `error` event after some text; the stream ends there, without `done`.",
            script=DEMO_SCRIPT,
            fault=SendError(after_events=12),
        ),
        Scenario(
            "fault-no-done",
            "The whole turn, then the stream ends cleanly without `done`.",
            script=DEMO_SCRIPT,
            fault=EndWithoutDone(),
        ),
        *hostile(),
        Scenario(
            "status-401",
            "401 with a JSON error body: the token is not accepted.",
            fault=HttpError(401, "authentication_error", "Invalid bearer token."),
        ),
        Scenario(
            "status-403",
            "403 with a JSON error body: the token may not do this.",
            fault=HttpError(403, "permission_error", "This token may not use chat."),
        ),
        Scenario(
            "status-404",
            "404 with a JSON error body: no such session.",
            fault=HttpError(404, "not_found_error", "Session not found."),
        ),
        Scenario(
            "status-429",
            "429 with `Retry-After: 2` and a JSON error body.",
            fault=HttpError(
                429, "rate_limit_error", "Too many requests.", headers=(("retry-after", "2"),)
            ),
        ),
        Scenario(
            "status-500",
            "500 with a JSON error body.",
            fault=HttpError(500, "api_error", "Internal server error."),
        ),
    ]


def hostile() -> list[Scenario]:
    """A hostile server: each is what a client's limits, deadline or scrubber is for."""
    return [
        Scenario(
            "fault-endless-line",
            "After a citation, a `data:` line that never ends: only `max_event_bytes` stops it.",
            script=DEMO_SCRIPT,
            fault=SendEndlessLine(after_events=12),
        ),
        Scenario(
            "fault-oversized-event",
            "After a citation, a well-formed 64 MiB `text` event, then the end without `done`.",
            script=DEMO_SCRIPT,
            fault=SendOversizedEvent(after_events=12),
        ),
        Scenario(
            "fault-gzip-bomb",
            "A gzip body that inflates to 1 GiB after a citation; by header, the session body too.",
            script=DEMO_SCRIPT,
            fault=SendGzipBomb(after_events=12),
        ),
        Scenario(
            "fault-trickle",
            "After a citation, a byte every 2 s forever: no idle timeout fires, a deadline must.",
            script=DEMO_SCRIPT,
            fault=Trickle(after_events=12),
        ),
        Scenario(
            "fault-keep-alive-forever",
            "After a citation, a keep-alive every second forever: only a deadline ends the turn.",
            script=DEMO_SCRIPT,
            fault=KeepAliveForever(after_events=12),
        ),
        Scenario(
            "fault-echo-token",
            "After a citation, an `error` event whose message holds the request's bearer token.",
            script=DEMO_SCRIPT,
            fault=EchoToken(after_events=12),
        ),
        Scenario(
            "fault-echo-token-401",
            "401 whose JSON error message holds the request's bearer token.",
            fault=EchoToken(
                status=401,
                error_type="authentication_error",
                message="Invalid bearer token: {token}",
            ),
        ),
    ]
