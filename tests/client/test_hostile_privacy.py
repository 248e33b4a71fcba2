"""A server that echoes the token back, on every path: it never shows.

The server is `tests.hostile.HostileServer` on 127.0.0.1, so every byte is the
test's and the real HTTP stack (httpx, httpcore, h11) runs and logs. Each path
is checked for the exception's str and repr (and every error behind it), the
partial turn and its `error` event, the events' reprs, and every log record at
DEBUG, wherever it comes from (root, silvia_client, httpx, httpcore).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx
import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import ErrorEvent
from silvia_client.errors import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    ConfigurationError,
    IncompleteTurnError,
    InternalServerError,
    ServerStreamError,
    SilviaError,
    StreamError,
    UnexpectedResponseError,
)

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response
from .conftest import Api

pytestmark = pytest.mark.anyio

TOKEN = "sk-hostile-0123456789-SECRET"
JSON = {"content-type": "application/json"}


def chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def assert_hidden(*values: object) -> None:
    for value in values:
        assert TOKEN not in str(value), value
        assert TOKEN not in repr(value), value


def assert_error_hidden(error: BaseException) -> None:
    for link in chain(error):
        assert_hidden(link, link.args)
    if isinstance(error, APIStatusError):
        assert_hidden(error.body, error.request_id, error.error_type)
    if isinstance(error, StreamError):
        assert_hidden(error.turn, error.turn.error, error.request_id, error.session_id)


def assert_records_hidden(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert TOKEN not in record.getMessage(), (record.name, record.getMessage())
        assert TOKEN not in repr(record.args), record.name
        assert TOKEN not in repr(record.__dict__), record.name


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # the root: httpx, httpcore and silvia_client propagate
    return caplog


def serving(*answers: bytes) -> HostileServer:
    """A server giving `answers` in turn (the last one again), then closing the connection."""
    given: list[bytes] = list(answers)

    def respond(request: Request, connection: Connection) -> None:
        answer = given.pop(0) if len(given) > 1 else given[0]
        connection.send(answer)
        connection.sock.close()

    return HostileServer(respond)


ECHO = {"x-request-id": TOKEN}
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in TOKEN).encode()


def sse_body(*events: bytes, end: bool = True) -> bytes:
    return b"".join(chunk(e) for e in events) + (chunk(b"") if end else b"")


CHAT_FAILURES = {
    "401-json": (
        response(
            401,
            json.dumps({"error": {"type": f"auth {TOKEN}", "message": f"bad {TOKEN}"}}).encode(),
            {**JSON, **ECHO},
        ),
        AuthenticationError,
    ),
    "401-json-escaped": (
        # The token spelled with JSON escapes: only the parsed message holds it.
        response(401, b'{"error": {"message": "bad ' + ESCAPED + b'"}}', JSON),
        AuthenticationError,
    ),
    "500-text": (
        response(
            500, f"\x1b[2Jdown\nFAKE LOG LINE {TOKEN}".encode(), {"content-type": "text/plain"}
        ),
        InternalServerError,
    ),
    "500-reason": (response(500, b"", ECHO, reason=f"Broken {TOKEN}"), InternalServerError),
    "200-not-a-stream": (
        response(200, f"<html>{TOKEN}</html>".encode(), {"content-type": "text/html", **ECHO}),
        UnexpectedResponseError,
    ),
    "error-event": (
        head(200, {**SSE, **ECHO}, chunked=True)
        + sse_body(
            event("session", {"sessionId": "s1"}),
            event("text", {"text": "Hello"}),
            event("error", {"error": {"type": "overloaded", "message": f"echo {TOKEN}\x1b[0m"}}),
        ),
        ServerStreamError,
    ),
    "error-event-string": (
        head(200, SSE, chunked=True) + sse_body(event("error", {"error": f"echo {TOKEN}"})),
        ServerStreamError,
    ),
    "no-done": (
        head(200, {**SSE, **ECHO}, chunked=True)
        + sse_body(event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"})),
        IncompleteTurnError,
    ),
    "malformed-header": (
        f"HTTP/1.1 200 OK\r\nx-echo {TOKEN}\r\n\r\n".encode(),
        APIConnectionError,
    ),
}


async def test_chat_failures_never_show_the_token(api: Api, logs: pytest.LogCaptureFixture) -> None:
    for name, (answer, expected) in CHAT_FAILURES.items():
        with serving(answer) as server:
            client = api.client(base_url=server.url, token=TOKEN, max_retries=0)
            events, error = await api.read(client)
        assert isinstance(error, expected), name
        assert_error_hidden(error)
        assert_hidden(events)
        for got in events:
            if isinstance(got, ErrorEvent):
                assert_hidden(got.message, got.body, got.error_type)
    assert_records_hidden(logs)
    assert any(r.name.startswith("httpcore") for r in logs.records)  # the stack did log


async def test_the_error_event_is_blanked_as_the_turn_keeps_it(api: Api) -> None:
    answer, _ = CHAT_FAILURES["error-event"]
    with serving(answer) as server:
        events, error = await api.read(api.client(base_url=server.url, token=TOKEN))
    assert isinstance(error, ServerStreamError)
    (sent,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert sent.message == "echo <token>\\x1b[0m"  # blanked, and the escape sequence shown
    assert error.turn.error is not None
    assert error.turn.error.message == sent.message
    assert "<token>" in str(error)
    assert error.request_id == "<token>"
    assert error.session_id == "s1"


async def test_a_session_id_echoing_the_token_is_blanked_on_the_error(api: Api) -> None:
    # The turn keeps the id as sent (it is what continues the session); the error,
    # which is for showing, blanks it.
    answer = head(200, SSE, chunked=True) + sse_body(
        event("session", {"sessionId": f"s-{TOKEN}\n"}), event("text", {"text": "Hi"})
    )
    with serving(answer) as server:
        _, error = await api.read(api.client(base_url=server.url, token=TOKEN))
    assert isinstance(error, IncompleteTurnError)
    assert error.session_id == "s-<token>\\n"
    assert TOKEN not in str(error)
    assert error.turn.session_id == f"s-{TOKEN}\n"


async def test_a_control_character_in_a_message_is_escaped(api: Api) -> None:
    for body, shown in [
        (b"\x1b[2Jdown\nFAKE LOG LINE", "500: \\x1b[2Jdown FAKE LOG LINE"),  # a text preview
        (b'{"error": "down\\nFAKE LOG LINE\\u202e"}', "500: down\\nFAKE LOG LINE\\u202e"),
    ]:
        with serving(response(500, body, {"content-type": "text/plain"})) as server:
            _, error = await api.read(api.client(base_url=server.url, token=TOKEN, max_retries=0))
        assert isinstance(error, InternalServerError), body
        assert str(error) == shown, body


SESSION_FAILURES = {
    "200-not-json": (
        response(200, f"<html>{TOKEN}</html>".encode(), {"content-type": "text/html", **ECHO}),
        UnexpectedResponseError,
    ),
    "200-not-a-session": (
        response(200, json.dumps({"messages": TOKEN}).encode(), {**JSON, **ECHO}),
        UnexpectedResponseError,
    ),
    "404-json": (
        response(404, json.dumps({"error": f"no session {TOKEN}"}).encode(), {**JSON, **ECHO}),
        APIStatusError,
    ),
    "500-reason": (response(500, b"", ECHO, reason=f"Broken {TOKEN}"), InternalServerError),
}


async def test_session_failures_never_show_the_token(
    api: Api, logs: pytest.LogCaptureFixture
) -> None:
    for name, (answer, expected) in SESSION_FAILURES.items():
        with serving(answer) as server:
            client = api.client(base_url=server.url, token=TOKEN, max_retries=0)
            with pytest.raises(SilviaError) as caught:
                await api.session(client, "s1")
        assert isinstance(caught.value, expected), name
        assert_error_hidden(caught.value)
    assert_records_hidden(logs)


async def test_a_request_id_echoing_the_token_on_a_good_turn(
    api: Api, logs: pytest.LogCaptureFixture
) -> None:
    answer = head(200, {**SSE, **ECHO}, chunked=True) + sse_body(
        event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"}), event("done", {})
    )
    with serving(answer) as server:
        client = api.client(base_url=server.url, token=TOKEN)
        if isinstance(client, AsyncSilviaClient):
            async with client.chat.stream("hi") as astream:
                turn = await astream.until_done()
                request_id = astream.request_id
        else:
            with client.chat.stream("hi") as stream:
                turn = stream.until_done()
                request_id = stream.request_id
    assert turn.complete
    assert request_id == "<token>"
    assert_records_hidden(logs)
    assert any("request id <token>" in r.getMessage() for r in logs.records)


# ------------------------------------------------------------------------------ the token's shape


def test_a_token_with_whitespace_or_controls_is_refused_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for cls in (SilviaClient, AsyncSilviaClient):
        with pytest.raises(ConfigurationError, match="token is empty"):
            cls(base_url="https://silvia.test", token="")
        for bad in [
            TOKEN + "\n",
            TOKEN + "\r",
            " " + TOKEN,
            "tok en-0123456789",
            "ключ-0123456789",
        ]:
            with pytest.raises(ConfigurationError, match="token") as caught:
                cls(base_url="https://silvia.test", token=bad)
            assert bad.strip() not in str(caught.value), bad
            monkeypatch.setenv("SILVIA_TOKEN", bad)
            with pytest.raises(ConfigurationError, match="SILVIA_TOKEN") as caught:
                cls(base_url="https://silvia.test")
            assert bad.strip() not in str(caught.value), bad
            monkeypatch.delenv("SILVIA_TOKEN")


async def test_an_empty_token_variable_means_no_token(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "")
    seen: list[Request] = []

    def respond(request: Request, connection: Connection) -> None:
        seen.append(request)
        connection.send(response(401, b'{"error": "who are you?"}', JSON))

    with HostileServer(respond) as server:
        _, error = await api.read(api.client(base_url=server.url, token=None))
    assert isinstance(error, AuthenticationError)
    assert "authorization" not in seen[0].headers
    assert "SILVIA_TOKEN" in str(error)


# ------------------------------------------------------------------------------------- redirects


async def test_a_redirect_is_never_followed(api: Api) -> None:
    elsewhere: list[Request] = []

    def other(request: Request, connection: Connection) -> None:
        elsewhere.append(request)
        connection.send(response(200, b"{}", JSON))

    with HostileServer(other) as target:

        def redirect(request: Request, connection: Connection) -> None:
            connection.send(response(307, b"", {"location": target.url + "/api/claude"}))

        with HostileServer(redirect) as server:
            http_cls = httpx.AsyncClient if api.is_async else httpx.Client
            http = http_cls(follow_redirects=True)
            client = api.client(base_url=server.url, token=TOKEN, http_client=http)
            _, error = await api.read(client)
            with pytest.raises(APIStatusError) as caught:
                await api.session(client, "s1")
            if isinstance(http, httpx.AsyncClient):
                await http.aclose()
            else:
                http.close()
    assert isinstance(error, APIStatusError)
    assert error.status_code == 307
    assert caught.value.status_code == 307
    assert elsewhere == []


# ---------------------------------------------------------------------------------- plain http


def test_plain_http_with_a_token_warns_once_per_client(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    caplog.set_level(logging.WARNING, logger="silvia_client")
    for url, warned in [
        ("http://staging.example.com", True),
        ("http://10.0.0.5:8080", True),
        ("https://staging.example.com", False),
        ("http://127.0.0.1:8000", False),
        ("http://127.5.0.1", False),
        ("http://[::1]:8000", False),
        ("http://localhost:8000", False),
        ("http://api.localhost", False),
        ("http://silvia.test", False),
    ]:
        for cls in (SilviaClient, AsyncSilviaClient):
            caplog.clear()
            client = cls(base_url=url, token=TOKEN)
            cls(base_url=url)  # no token, nothing to warn about
            warnings = [r for r in caplog.records if "plain http" in r.getMessage()]
            assert len(warnings) == (1 if warned else 0), (cls, url)
            assert_records_hidden(caplog)
            if isinstance(client, SilviaClient):
                client.close()
