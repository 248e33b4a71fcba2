"""`ReferenceServer`: a Silvia that is not Silvia, speaking whatever `WireFormat` it is given.

Where things are: it answers `Request`s with `Reply`s and knows no sockets;
`transport()` (in-process) and `serve_loopback()` (127.0.0.1) move the bytes,
and `client()` / `async_client()` are ready SDK clients. `POST {chat_path}`
plays a scenario (the `x-silvia-scenario` header, a `/scenario <name>` message,
or the default) and stores the turn; `GET {session_path}<id>` returns a stored
session. Every request needs a bearer token (exactly `token=` when given);
every reply carries a request id. A status or gzip-bomb scenario named by the
header applies to both routes.

The stored sessions come last: `SessionStore` keeps each turn's messages with their
citations as streamed, and hands out deep copies, so a test can look without racing
the server thread.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import httpx

from .. import DEFAULT_WIRE, AsyncSilviaClient, SilviaClient, WireFormat
from .._base import BoundedCookieJar
from ._broken import BROKEN_SCENARIOS
from ._expected import ExpectedTurn, expected_turn
from ._faults import HttpError, SendGzipBomb, status_fault
from ._library import DEFAULT_SCENARIO, LEGACY_HISTORY, SCENARIOS
from ._loopback import LoopbackServer
from ._scenario import SCENARIO_COMMAND, SCENARIO_HEADER, Scenario, commanded
from ._script import PriorTurn
from ._steps import Reply, Request, error_reply, json_bytes
from ._transport import IN_PROCESS_URL, InProcessTransport
from ._turn import PlayedTurn, play

# What `client()` sends as its token to a server that accepts any.
_ANY_TOKEN = "reference-server"
_C = TypeVar("_C", SilviaClient, AsyncSilviaClient)


class _Refusal(Exception):
    """An error reply (`args[0]`, an `HttpError`), raised from deep in a handler."""


class ReferenceServer:
    """The reference server: scenarios, target rules, session storage, the wire.

    `scenarios` replaces the built-in library (default: all of `SCENARIOS`,
    and the `BROKEN_SCENARIOS` a QA run is checked against);
    `token` requires that bearer token; `pace` puts that many seconds between
    streamed deltas (the demo's typing effect; 0 for tests); `deterministic`
    numbers session and message ids (`sess_0001`, `msg_0001`, ...) and fixes
    every stored timestamp, for outputs that must repeat (a notebook's, a
    snapshot's). Thread-safe: one instance can serve the in-process transport
    and a loopback server at once.
    """

    def __init__(
        self,
        scenarios: Iterable[Scenario] | None = None,
        *,
        default_scenario: str = DEFAULT_SCENARIO,
        token: str | None = None,
        wire: WireFormat = DEFAULT_WIRE,
        pace: float = 0.0,
        deterministic: bool = False,
    ) -> None:
        if token is not None and not token.strip():
            raise ValueError("token must be a non-empty string, or None to accept any token")
        self.wire = wire
        self.pace = pace
        self._token = token
        self._scenarios: dict[str, Scenario] = (
            {**SCENARIOS, **BROKEN_SCENARIOS}
            if scenarios is None
            else {s.name: s for s in scenarios}
        )
        if default_scenario not in self._scenarios:
            raise ValueError(f"no scenario named {default_scenario!r}")
        self.default_scenario = default_scenario
        self.sessions: SessionStore = SessionStore(wire, deterministic=deterministic)

    def __repr__(self) -> str:
        # Never the token: only whether one is required.
        return (
            f"<ReferenceServer scenarios={len(self._scenarios)} "
            f"default={self.default_scenario!r} token_required={self._token is not None}>"
        )

    # -- scenarios -----------------------------------------------------------

    @property
    def scenarios(self) -> Mapping[str, Scenario]:
        """The scenarios this server plays, by name (read-only; use `register`)."""
        return MappingProxyType(self._scenarios)

    def register(self, *scenarios: Scenario) -> None:
        """Add scenarios to this server, replacing any of the same name."""
        for scenario in scenarios:
            self._scenarios[scenario.name] = scenario

    def expected_turn(
        self, scenario: str | Scenario, *, idle_timeout: float = 5.0, token: str = ""
    ) -> ExpectedTurn:
        """What a client sending `token` should assemble when this server plays `scenario`."""
        if isinstance(scenario, str):
            scenario = self._scenarios[scenario]
        return expected_turn(scenario, wire=self.wire, idle_timeout=idle_timeout, token=token)

    # -- sessions ------------------------------------------------------------

    def seed_session(self, history: Sequence[PriorTurn], *, session_id: str | None = None) -> str:
        """Store `history` as a session's earlier turns; returns the session id."""
        session_id = session_id or self.sessions.new_session_id()
        self.sessions.open(session_id, history[0].message if history else "")
        for prior in history:
            self.sessions.append(session_id, "user", prior.message)
            self._store_answer(session_id, play(prior.script), legacy=prior.legacy)
        return session_id

    def seed_legacy_session(self, *, session_id: str | None = None) -> str:
        """A session holding rows saved before targets existed (no `target` key)."""
        return self.seed_session(LEGACY_HISTORY, session_id=session_id)

    def _store_answer(self, session_id: str, turn: PlayedTurn, *, legacy: bool = False) -> None:
        citations, inline = list(turn.summary), list(turn.inline_citations)
        if legacy:
            citations = [_without_target(c) for c in citations]
            inline = [_without_target(c) for c in inline]
        self.sessions.append(
            session_id, "assistant", turn.text, citations=citations, inline_citations=inline
        )

    # -- runners -------------------------------------------------------------

    def transport(self) -> InProcessTransport:
        """An in-process httpx transport (sync and async) to this server."""
        return InProcessTransport(self)

    def client(self, **options: Any) -> SilviaClient:
        """A ready `SilviaClient` on this server, in-process; closing it closes all it made.

        `options` go to the `SilviaClient` constructor (`timeout=`, `idle_timeout=`,
        `default_headers=`, ...). The token is the one this server requires, else
        any; pass `token=` to send another (a wrong one gets 401).
        """
        return self._client(SilviaClient, httpx.Client, options)

    def async_client(self, **options: Any) -> AsyncSilviaClient:
        """The `AsyncSilviaClient` twin of `client()`: `async with`, or `await client.close()`."""
        return self._client(AsyncSilviaClient, httpx.AsyncClient, options)

    def _client(self, kind: type[_C], http: Callable[..., Any], options: dict[str, Any]) -> _C:
        if "http_client" in options:
            raise TypeError(
                "client() makes its own httpx client; for one of yours, pass "
                "httpx.Client(transport=server.transport()) and base_url=IN_PROCESS_URL"
            )

        def pool() -> Any:
            return http(transport=self.transport(), cookies=BoundedCookieJar())

        options = {"base_url": IN_PROCESS_URL, "token": self._token or _ANY_TOKEN, **options}
        client = kind(**options, http_client=pool())
        # The SDK's own pool, as a production client's: closed with it, made anew in a fork.
        client._pool.own(pool)
        return client

    def serve_loopback(self, host: str = "127.0.0.1", port: int = 0) -> LoopbackServer:
        """A real HTTP/1.1 server for this one; `with server.serve_loopback() as url: ...`."""
        return LoopbackServer(self, host=host, port=port)

    # -- requests ------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        """Answer one request (any thread)."""
        request_id = _request_id()
        try:
            return self._route(request, request_id)
        except _Refusal as refusal:
            return self._error_reply(refusal.args[0], request_id)

    def scenario_for(self, request: Request) -> str | None:
        """The name of the scenario `request` plays, for a log line (`silvia serve -v`).

        Its `x-silvia-scenario` header's, else (a chat POST) its message's
        `/scenario NAME`, else the default; None for a name this server does not
        know, and for a session GET that names none. Only the name comes out:
        never the message.
        """
        name = request.headers.get(SCENARIO_HEADER, "").strip()
        if not name and urlsplit(request.target).path == self.wire.chat_path:
            try:
                body = json.loads(request.body)
            except (ValueError, RecursionError):
                return None
            message = body.get(self.wire.message_field) if isinstance(body, dict) else None
            name = commanded(message, SCENARIO_COMMAND) or self.default_scenario
        return name if name in self._scenarios else None

    def error_reply(self, status: int, error_type: str, message: str) -> Reply:
        """An error reply in this server's format (for runners refusing a request themselves)."""
        return self._error_reply(HttpError(status, error_type, message), _request_id())

    def _route(self, request: Request, request_id: str) -> Reply:
        wire = self.wire
        path = urlsplit(request.target).path
        session_id: str | None = None
        raw = path[len(wire.session_path) :] if path.startswith(wire.session_path) else ""
        if path == wire.chat_path:
            allowed = "POST"
        elif raw and "/" not in raw:  # one segment: an id with a `/` in it arrives as `%2F`
            allowed, session_id = "GET", unquote(raw)
        else:
            raise _refusal(404, "not_found_error", f"No route for {path}.")
        if request.method != allowed:
            raise _refusal(405, "invalid_request_error", f"Use {allowed} here.", ("allow", allowed))
        token, refused = request.bearer(self._token)
        if refused is not None:
            raise _refusal(401, "authentication_error", refused)
        named = request.headers.get(SCENARIO_HEADER, "").strip()
        scenario = self._named(named) if named else None
        if scenario is not None and (refusal := status_fault(scenario.fault, token)) is not None:
            raise _Refusal(refusal)
        if session_id is not None:
            headers = (("content-type", "application/json"), (wire.request_id_header, request_id))
            if scenario is not None and isinstance(bomb := scenario.fault, SendGzipBomb):
                steps = tuple(bomb.session_body(session_id, wire))
                return Reply(200, (*headers, *bomb.headers), steps=steps)
            body = self.sessions.body(session_id)
            if body is None:
                raise _refusal(404, "not_found_error", "Session not found.")
            return Reply(200, headers, body=json_bytes(body))
        return self._chat_reply(request, scenario, request_id, token)

    def _named(self, name: str) -> Scenario:
        scenario = self._scenarios.get(name)
        if scenario is None:
            unknown = f"Unknown scenario {name!r}; `silvia serve --list` lists them."
            raise _refusal(400, "invalid_request_error", unknown)
        return scenario

    def _chat_reply(
        self, request: Request, scenario: Scenario | None, request_id: str, token: str
    ) -> Reply:
        wire = self.wire
        try:
            body = json.loads(request.body)
        except ValueError:
            raise _refusal(400, "invalid_request_error", "The body is not JSON.") from None
        if not isinstance(body, dict):
            raise _refusal(400, "invalid_request_error", "The body must be a JSON object.")
        message = body.get(wire.message_field)
        if not isinstance(message, str) or not message.strip():
            must = f"`{wire.message_field}` must be a non-empty string."
            raise _refusal(400, "invalid_request_error", must)
        requested_id = body.get(wire.session_id_field)
        if requested_id is not None and (not isinstance(requested_id, str) or not requested_id):
            must = f"`{wire.session_id_field}` must be a string."
            raise _refusal(400, "invalid_request_error", must)
        if scenario is None:
            named = commanded(message, SCENARIO_COMMAND)
            scenario = (
                self._scenarios[self.default_scenario] if named is None else self._named(named)
            )
        if (refusal := status_fault(scenario.fault, token)) is not None:
            raise _Refusal(refusal)

        # A session id the server does not know is a 404, as a real server answers
        # (the wire contract's [default]); a turn without one starts a session.
        if requested_id is not None and requested_id not in self.sessions:
            raise _refusal(404, "not_found_error", "Session not found.")
        session_id = requested_id or self.sessions.new_session_id()
        turn = scenario.play()
        history = scenario.history

        def start() -> None:
            self.sessions.open(session_id, message)
            if history and self.sessions.is_empty(session_id):
                self.seed_session(history, session_id=session_id)
            self.sessions.append(session_id, "user", message)

        def complete() -> None:
            self._store_answer(session_id, turn)

        steps = scenario.steps(
            session_id=session_id,
            wire=wire,
            pace=self.pace,
            turn=turn,
            on_start=start,
            on_complete=complete,
            token=token,
        )
        headers = (
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            (wire.request_id_header, request_id),
            *(scenario.fault.headers if isinstance(scenario.fault, SendGzipBomb) else ()),
        )
        return Reply(200, headers, steps=tuple(steps))

    def _error_reply(self, error: HttpError, request_id: str) -> Reply:
        headers = ((self.wire.request_id_header, request_id), *error.headers)
        return error_reply(
            error.status, error.error_type, error.message, wire=self.wire, headers=headers
        )


def _request_id() -> str:
    return f"req_{uuid.uuid4().hex[:24]}"


def _refusal(status: int, error_type: str, message: str, *headers: tuple[str, str]) -> _Refusal:
    return _Refusal(HttpError(status, error_type, message, headers))


def _without_target(citation: Mapping[str, object]) -> dict[str, object]:
    return {key: value for key, value in citation.items() if key != "target"}


FIXED_TIME = "2025-01-01T00:00:00.000Z"
"""Every timestamp of a deterministic store."""


@dataclass
class StoredSession:
    """One session as stored: `messages` are wire rows (`id`, `role`, `content`, ...)."""

    id: str
    title: str
    created_at: str
    updated_at: str
    messages: list[dict[str, object]] = field(default_factory=list)

    def body(self, wire: WireFormat) -> dict[str, object]:
        """The session endpoint's JSON body."""
        session = {key: value for key, value in vars(self).items() if key != "messages"}
        return {wire.session_key: session, wire.messages_key: self.messages}


class SessionStore(Mapping[str, StoredSession]):
    """Thread-safe session storage; `store[session_id]` is a snapshot copy (`deterministic`:
    see `ReferenceServer`, every timestamp `FIXED_TIME`)."""

    def __init__(self, wire: WireFormat, *, deterministic: bool = False) -> None:
        self._wire = wire
        self._lock = threading.Lock()
        self._sessions: dict[str, StoredSession] = {}
        self._counters = (itertools.count(1), itertools.count(1)) if deterministic else None

    def new_session_id(self) -> str:
        """A fresh session id (random, or the next of `sess_0001`, ... when deterministic)."""
        if self._counters is None:
            return f"sess_{uuid.uuid4().hex}"
        with self._lock:
            return f"sess_{next(self._counters[0]):04d}"

    def _now(self) -> str:
        if self._counters is not None:
            return FIXED_TIME
        return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _message_id(self) -> str:  # under the lock
        if self._counters is None:
            return f"msg_{uuid.uuid4().hex[:24]}"
        return f"msg_{next(self._counters[1]):04d}"

    def __getitem__(self, session_id: str) -> StoredSession:
        with self._lock:
            return copy.deepcopy(self._sessions[session_id])

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._sessions))

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        # Without `Mapping`'s default, which would deep-copy the session to look.
        with self._lock:
            return session_id in self._sessions

    def open(self, session_id: str, first_message: str) -> bool:
        """Make sure the session exists (titled by its first message); True if it was new."""
        with self._lock:
            if session_id in self._sessions:
                return False
            now = self._now()
            title = " ".join(first_message.split())[:60] or "New chat"
            self._sessions[session_id] = StoredSession(session_id, title, now, now)
            return True

    def is_empty(self, session_id: str) -> bool:
        """Whether the session is unknown or holds no message yet."""
        with self._lock:
            session = self._sessions.get(session_id)
            return session is None or not session.messages

    def append(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        citations: Sequence[Mapping[str, object]] = (),
        inline_citations: Sequence[Mapping[str, object]] = (),
    ) -> None:
        """Store one message row at the end of the session."""
        now = self._now()
        row: dict[str, object] = {
            "id": "",
            "role": role,
            "content": content,
            "created_at": now,
            self._wire.message_citations_key: copy.deepcopy(list(citations)),
            self._wire.message_inline_citations_key: copy.deepcopy(list(inline_citations)),
        }
        with self._lock:
            row["id"] = self._message_id()
            session = self._sessions[session_id]
            session.messages.append(row)
            session.updated_at = now

    def body(self, session_id: str) -> dict[str, object] | None:
        """The session endpoint's JSON body, or None if there is no such session."""
        with self._lock:
            session = self._sessions.get(session_id)
            return None if session is None else copy.deepcopy(session.body(self._wire))
