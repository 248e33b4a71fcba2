"""Privacy: the bearer token and an account's provider never show: not in a repr, an exception
(nor any error behind it), the partial turn, its events, or a log record.

Providers are checked two ways: the vendor names are absent, and what shows is the same for
another provider or none (so a vendor name nobody thought of is covered too). The second half:
a server that echoes the token (`tests.hostile.HostileServer`, so the real HTTP stack runs and
logs, at DEBUG from the root down), on every path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import ChatEvent, ErrorEvent
from silvia_client.errors import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    IncompleteTurnError,
    InternalServerError,
    ServerStreamError,
    SilviaError,
    StreamError,
    UnexpectedResponseError,
)

from ..hostile import SSE, Connection, HostileServer, Request, chunk, head, response
from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_SOURCE,
    BASE_URL,
    CHAT_URL,
    TOKEN,
    Body,
    account,
    accounts,
    citation,
    done,
    error,
    event,
    json_response,
    session,
    sse_response,
    summary,
    text,
)

pytestmark = pytest.mark.anyio


SESSION_PATH = "/api/chat/sessions/s1"
VENDORS = ("plaid", "snaptrade")  # "manual" is also an English word; checked by comparison
SECRET = "sk-hostile-0123456789-SECRET"  # the hostile server's token, which it echoes


def leaks(value: object) -> list[str]:
    out = str(value)
    return [secret for secret in (TOKEN, SECRET, *VENDORS) if secret in out]


def assert_hidden(*values: object) -> None:
    for value in values:
        assert leaks(value) == leaks(repr(value)) == [], repr(value)


def assert_error_hidden(error: BaseException) -> None:
    seen: list[BaseException] = []
    link: BaseException | None = error
    while link is not None and link not in seen:  # the error, every cause and context behind it
        seen.append(link)
        assert_hidden(link, link.args)
        link = link.__cause__ or link.__context__
    if isinstance(error, APIStatusError):
        assert_hidden(error.body, error.request_id, error.error_type)
    if isinstance(error, StreamError):
        assert_hidden(error.turn, error.turn.error, error.request_id, error.session_id)


def assert_records_hidden(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert leaks(record.getMessage()) == [], (record.name, record.getMessage())
        assert leaks(repr(record.args)) == [], record.name
        assert leaks(repr(record.__dict__)) == [], record.name


def rows(provider: str | None) -> list[Any]:
    pair = accounts((ACCOUNT_A, provider), (ACCOUNT_B, provider))
    return [
        {"source": ACCOUNT_SOURCE, "title": "Checking", "target": account(ACCOUNT_A, provider)},
        {"source": "silvia://your-account/cards", "target": pair},
        # Malformed rows that hold a provider: no source; a source of the wrong type.
        {"title": "no source", "target": account(ACCOUNT_B, provider)},
        {"source": 7, "target": account(ACCOUNT_B, provider), "provider": provider},
    ]


def turn_body(provider: str | None, end: bytes = done()) -> bytes:
    r = rows(provider)
    return b"".join(
        [
            session("sess_1"),
            text("Your checking "),
            citation(r[0]),
            citation(r[1]),
            citation(r[2]),  # malformed: no source
            event("citation_v2", {"citation": r[0]}),  # unknown, holding a target
            event("citation", "{" + json.dumps(r[0])[:-20]),  # malformed JSON, cut in a target
            text("has $120."),
            summary(r),
            end,
        ]
    )


def session_body(provider: str | None) -> dict[str, Any]:
    r = rows(provider)
    return {
        "session": {"id": "s1", "title": "Checking"},
        "messages": [
            {"id": "m1", "role": "assistant", "content": "x", "citations": r, "inline_citations": r}
        ],
    }


def test_token_not_in_client_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for client in (
        SilviaClient(base_url=BASE_URL, token=TOKEN),  # the async one's: generated alike
        SilviaClient(base_url=BASE_URL),  # the token from the environment
    ):
        assert TOKEN not in repr(client)
        assert TOKEN not in str(client)
        assert TOKEN not in repr(vars(client))
        # No public name shows the kept token; its repr is what a debugger or `vars()` shows.
        assert repr(client._token) == str(client._token) == "<token>"


Answer = Callable[[], httpx.Response | Exception]


def failures(provider: str) -> dict[str, tuple[str, Answer]]:
    """Each failure: the endpoint, and what answers it (a response, or an error raised)."""
    cut = turn_body(provider, b"")
    payload = json.dumps({"citations": rows(provider)})  # no stream nor session: previewed
    answer = session_body(provider)["messages"][0]
    return {
        "401": ("chat", lambda: httpx.Response(401, json={"error": "bad token"})),
        "403": ("chat", lambda: httpx.Response(403, text="no")),
        "429": ("chat", lambda: httpx.Response(429, headers={"retry-after": "1"})),
        "500": ("chat", lambda: httpx.Response(500)),
        "not-a-stream": ("chat", lambda: httpx.Response(200, text=payload)),
        "connect": ("chat", lambda: httpx.ConnectError("refused")),
        "read-before-headers": ("chat", lambda: httpx.ReadError("reset")),
        "dropped": ("chat", lambda: sse_response(Body(cut, fail=httpx.ReadError("x")))),
        "idle": ("chat", lambda: sse_response(Body(cut, fail=httpx.ReadTimeout("x")))),
        "error-event": ("chat", lambda: sse_response(turn_body(provider, error("nope")))),
        "no-done": ("chat", lambda: sse_response(cut)),
        "session-404": ("session", lambda: httpx.Response(404)),
        "session-500": ("session", lambda: httpx.Response(500, text="down")),
        # Cut inside the first provider.
        "session-not-json": ("session", lambda: httpx.Response(200, text=payload[:150])),
        "session-not-a-session": ("session", lambda: json_response({"messages": {"0": answer}})),
        "session-connect": ("session", lambda: httpx.ConnectError("refused")),
    }


async def test_no_repr_failure_or_log_record_depends_on_the_provider(
    api: Api, server: respx.MockRouter, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    reprs: list[str] = []
    said: list[dict[str, str]] = []  # each failure's message, per provider
    for provider in ("snaptrade", "manual", None):
        body = turn_body(provider)
        server.post(CHAT_URL).mock(side_effect=lambda r, body=body: sse_response(body))
        server.get(SESSION_PATH).mock(return_value=json_response(session_body(provider)))
        events, failure = await api.read(api.client())
        assert failure is None
        turn = await api.turn(api.client())
        got = await api.session(api.client(), "s1")
        (msg,) = got.messages
        # The malformed rows are reported, without their content.
        assert turn.citation_errors
        assert msg.citation_errors
        assert msg.inline_citation_errors
        errors = (*turn.citation_errors, *msg.citation_errors, *msg.inline_citation_errors)
        shown = (events, turn, turn.citations, got, msg, msg.citations, msg.inline_citations)
        reprs.append(repr((*shown, *errors)) + str([e.reason for e in errors]))
        if provider is None:  # a preview shows `null` as sent, and blanks a provider's name
            continue
        said.append({})
        for name, (endpoint, answer) in failures(provider).items():

            def respond(request: httpx.Request, answer: Answer = answer) -> httpx.Response:
                made = answer()
                if isinstance(made, Exception):
                    raise made
                return made

            route = server.post(CHAT_URL) if endpoint == "chat" else server.get(SESSION_PATH)
            route.mock(side_effect=respond)
            with pytest.raises(SilviaError) as caught:
                await api.request(api.client(), endpoint)
            assert_error_hidden(caught.value)
            said[-1][name] = str(caught.value)
    with_vendor, with_manual, without = reprs
    assert with_vendor == without
    assert with_manual == without
    assert leaks(with_vendor) == []
    assert said[0] == said[1]
    assert "accountId" in said[0]["not-a-stream"]  # the start of the body is still shown
    # The records this test relies on exist (a silent SDK would pass vacuously): retried
    # GETs, a 401, and turns with malformed rows holding providers.
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("silvia_client")]
    for logged in ("retrying", "401", "malformed"):
        assert any(logged in message for message in ours), logged
    assert_records_hidden(caplog)


async def test_a_token_the_server_echoes_is_blanked_unless_too_short_to_be_one(
    api: Api, server: respx.MockRouter
) -> None:
    # Under 8 characters a token cannot be a secret; blanking it would blank words.
    for token, shown in [("sk-live-0123456789abcdef", "bad <token>"), ("abc", "bad abc")]:
        echo = {"error": {"type": "auth", "message": f"bad {token}"}}
        server.get(SESSION_PATH).mock(return_value=httpx.Response(401, json=echo))
        with pytest.raises(AuthenticationError) as caught:
            await api.session(api.client(token=token), "s1")
        assert caught.value.message == shown, token
        assert shown in str(caught.value), token
    assert "0123456789abcdef" not in repr(caught.value.body) + str(caught.value)


def serving(*answers: bytes) -> HostileServer:
    """A server giving `answers` in turn (the last one again), then closing the connection."""
    given: list[bytes] = list(answers)

    def respond(request: Request, connection: Connection) -> None:
        answer = given.pop(0) if len(given) > 1 else given[0]
        connection.send(answer)
        connection.sock.close()

    return HostileServer(respond)


ECHO = {"x-request-id": SECRET}
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in SECRET).encode()


def echoing(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    """A whole response whose request id is the token."""
    return response(status, body, {"content-type": content_type, **ECHO})


def echoing_stream(*events: bytes, echo: dict[str, str] = ECHO) -> bytes:
    """A whole event stream whose request id is the token (unless `echo` is {})."""
    return head(200, {**SSE, **echo}, chunked=True) + b"".join(map(chunk, [*events, b""]))


HTML = f"<html>{SECRET}</html>".encode()
REASON = response(500, b"", ECHO, reason=f"Broken {SECRET}")
CHAT_FAILURES = {
    "401-json": (
        echoing(401, json.dumps({"error": {"type": f"auth {SECRET}", "message": SECRET}}).encode()),
        AuthenticationError,
    ),
    # The token spelled with JSON escapes: only the parsed message holds it.
    "401-json-escaped": (
        echoing(401, b'{"error": {"message": "' + ESCAPED + b'"}}'),
        AuthenticationError,
    ),
    "500-text": (
        echoing(500, f"\x1b[2Jdown\nFAKE LOG LINE {SECRET}".encode(), "text/plain"),
        InternalServerError,
    ),
    "500-json": (
        echoing(500, b'{"error": "down\\nFAKE LOG LINE\\u202e"}', "text/plain"),
        InternalServerError,
    ),
    "500-reason": (REASON, InternalServerError),
    "200-not-a-stream": (echoing(200, HTML, "text/html"), UnexpectedResponseError),
    "error-event": (
        echoing_stream(session("s1"), text("Hello"), error(f"echo {SECRET}\x1b[0m", "overloaded")),
        ServerStreamError,
    ),
    "error-event-string": (
        echoing_stream(event("error", {"error": f"echo {SECRET}"}), echo={}),
        ServerStreamError,
    ),
    "no-done": (echoing_stream(session("s1"), text("Hi")), IncompleteTurnError),
    "malformed-header": (
        f"HTTP/1.1 200 OK\r\nx-echo {SECRET}\r\n\r\n".encode(),
        APIConnectionError,
    ),
}


SESSION_FAILURES = {
    "200-not-json": (echoing(200, HTML, "text/html"), UnexpectedResponseError),
    "200-not-a-session": (
        echoing(200, json.dumps({"messages": SECRET}).encode()),
        UnexpectedResponseError,
    ),
    "404-json": (echoing(404, json.dumps({"error": SECRET}).encode()), APIStatusError),
    "500-reason": (REASON, InternalServerError),
}
GOOD_TURN_ECHOING = echoing_stream(session("s1"), text("Hi"), done())


async def test_failures_and_a_good_turn_never_show_the_token(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # the root: httpx, httpcore and silvia_client propagate
    cases = [("chat", name, case) for name, case in CHAT_FAILURES.items()]
    cases += [("session", name, case) for name, case in SESSION_FAILURES.items()]
    answers = [answer for _, _, (answer, _) in cases]
    shown: dict[str, str] = {}
    with serving(*answers, GOOD_TURN_ECHOING) as server:  # one answer per case, then the turn
        for endpoint, name, (_, expected) in cases:
            client = api.client(base_url=server.url, token=SECRET, max_retries=0)
            events: list[ChatEvent] = []
            if endpoint == "chat":
                events, error = await api.read(client)
            else:
                with pytest.raises(SilviaError) as caught:
                    await api.session(client, "s1")
                error = caught.value
            assert isinstance(error, expected), name
            assert error is not None
            assert_error_hidden(error)
            assert_hidden(events)
            assert_hidden(
                *[(e.message, e.body, e.error_type) for e in events if isinstance(e, ErrorEvent)]
            )
            shown[name] = str(error)
            if name == "error-event":
                stopped, stopped_events = error, events
        # A good turn whose request id echoes the token.
        async with api.stream(api.client(base_url=server.url, token=SECRET)) as stream:
            turn = await stream.until_done()
    assert turn.complete
    assert stream.raw.request_id == turn.request_id == "<token>"
    assert_records_hidden(caplog)
    assert any(r.name.startswith("httpcore") for r in caplog.records)  # the stack did log
    assert any("request id <token>" in r.getMessage() for r in caplog.records)
    # Control characters are escaped: a newline would forge a log line, an escape sequence
    # drive a terminal (in a text preview; and in a JSON message, once parsed).
    assert shown["500-text"] == "500: \\x1b[2Jdown FAKE LOG LINE <token> (request id <token>)"
    assert shown["500-json"] == "500: down\\nFAKE LOG LINE\\u202e (request id <token>)"
    # The error event blanked, its escape sequence shown.
    assert isinstance(stopped, ServerStreamError)
    assert stopped.turn.error is not None
    assert stopped.turn.error.message == "echo <token>\\x1b[0m"
    assert [e.message for e in stopped_events if isinstance(e, ErrorEvent)] == [
        stopped.turn.error.message
    ]
    assert stopped.request_id == "<token>"


async def test_a_stream_error_blanks_the_session_id_the_turn_keeps_as_sent(
    api: Api, server: respx.MockRouter
) -> None:
    # The turn's is what continues the session; the error's is for showing.
    server.post(CHAT_URL).mock(return_value=sse_response(session(f"s-{TOKEN}\n") + error("x")))
    _, failure = await api.read(api.client())
    assert isinstance(failure, ServerStreamError)
    assert failure.session_id == "s-<token>\\n"
    assert failure.turn.session_id == f"s-{TOKEN}\n"


async def test_a_redirect_is_never_followed(api: Api, server: respx.MockRouter) -> None:
    # Followed, the request would go to a host no route mocks: an error other than the 307.
    moved = httpx.Response(307, headers={"location": "https://elsewhere.test/api/claude"})
    server.post(CHAT_URL).mock(return_value=moved)
    server.get(SESSION_PATH).mock(return_value=moved)
    client = api.client(http_client=api.http(follow_redirects=True))
    _, error = await api.read(client)
    with pytest.raises(APIStatusError) as caught:
        await api.session(client, "s1")
    assert isinstance(error, APIStatusError)
    assert (error.status_code, caught.value.status_code) == (307, 307)


def test_plain_http_with_a_token_warns_once_per_client_unless_the_host_stays_local(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    caplog.set_level(logging.WARNING, logger="silvia_client")
    for url, warned in [
        ("http://staging.example.com", True),
        ("http://10.0.0.5:8080", True),
        ("http://notlocalhost", True),
        ("http://localhost.example.com", True),
        ("http://silvia.testing", True),
        ("http://test", True),
        ("https://staging.example.com", False),
        ("http://127.0.0.1:8000", False),
        ("http://127.5.0.1", False),
        ("http://[::1]:8000", False),
        ("http://localhost:8000", False),
        ("http://localhost.:8000", False),
        ("http://api.localhost", False),
        ("http://silvia.test", False),
    ]:
        caplog.clear()
        AsyncSilviaClient(base_url=url, token=SECRET)
        AsyncSilviaClient(base_url=url)  # no token, nothing to warn about
        warnings = [r for r in caplog.records if "plain http" in r.getMessage()]
        assert len(warnings) == (1 if warned else 0), url
        assert_records_hidden(caplog)
