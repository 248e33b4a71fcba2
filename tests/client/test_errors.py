"""Failures: HTTP statuses, responses that are not a stream, streams that stop early, and
servers that are not there. Every error is a typed `SilviaError`; a stream that stops early
hands back the partial turn, with everything that arrived (what is retried: test_retries.py);
an `APIStatusError` has `.response` (a read copy of what the SDK kept, the token blanked).
"""

from __future__ import annotations

import gzip
import json
import socket

import httpx
import pytest
import respx

from silvia_client.citations import AccountTarget, WebTarget
from silvia_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    IncompleteTurnError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    ServerStreamError,
    SilviaError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    UnexpectedResponseError,
    UnprocessableEntityError,
)

from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_SOURCE,
    CHAT_URL,
    TOKEN,
    WEB_URL,
    Body,
    account,
    citation,
    done,
    error,
    event,
    row,
    session,
    sse_response,
    summary,
    text,
    web,
)

pytestmark = pytest.mark.anyio


SESSION_PATH = "/api/chat/sessions/s1"

STATUSES: list[tuple[int, type[APIStatusError]]] = [
    (400, BadRequestError),
    (401, AuthenticationError),
    (403, PermissionDeniedError),
    (404, NotFoundError),
    (409, ConflictError),
    (413, RequestTooLargeError),
    (418, APIStatusError),  # a status with no class of its own
    (422, UnprocessableEntityError),
    (429, RateLimitError),
    (500, InternalServerError),
    (502, InternalServerError),
    (503, InternalServerError),
]

# (body, content type, the message the error should carry, its error type)
BODIES: list[tuple[bytes, str, str, str | None]] = [
    (
        b'{"error": {"type": "invalid_request", "message": "Session is archived"}}',
        "application/json",
        "Session is archived",
        "invalid_request",
    ),
    (b'{"error": "Session is archived"}', "application/json", "Session is archived", None),
    (b"Session is archived", "text/plain", "Session is archived", None),
]


async def call(api: Api, endpoint: str, **client_kwargs: object) -> SilviaError:
    """Make one chat or session request expected to fail; return the error."""
    client = api.client(**client_kwargs)
    with pytest.raises(SilviaError) as info:
        await api.request(client, endpoint)
    return info.value


def route_for(server: respx.MockRouter, endpoint: str) -> respx.Route:
    return server.post(CHAT_URL) if endpoint == "chat" else server.get(SESSION_PATH)


@pytest.mark.parametrize("endpoint", ["chat", "session"])
async def test_status_maps_to_its_error(api: Api, server: respx.MockRouter, endpoint: str) -> None:
    for status, cls in STATUSES:
        for body, content_type, text_, kind in BODIES:
            case = (status, body)
            route_for(server, endpoint).mock(
                return_value=httpx.Response(
                    status,
                    content=body,
                    headers={"content-type": content_type, "x-request-id": "req_9"},
                )
            )
            err = await call(api, endpoint, max_retries=0)
            assert type(err) is cls, case
            assert err.status_code == status, case
            assert err.request_id == "req_9", case
            assert err.message == text_, case
            assert err.error_type == kind, case
            assert str(err) == f"{status}: {text_} (request id req_9)", case


async def test_an_error_body_missing_huge_undecodable_or_not_a_stream(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(return_value=httpx.Response(502))
    err = await call(api, "chat")
    assert isinstance(err, InternalServerError)
    assert (err.request_id, err.message, str(err)) == (None, "Bad Gateway", "502: Bad Gateway")
    body = Body([b"x" * 50_000] * 10)  # 500 kB of text: cut, and the piece read kept
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(
            400, stream=body, headers={"content-type": "text/plain"}
        )
    )
    err = await call(api, "chat")
    assert isinstance(err, APIStatusError)
    assert len(err.message) < 1000
    assert body.sent < 10  # not read whole
    assert body.closed
    assert err.response is not None
    assert 0 < len(err.response.content) <= 64 * 1024
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(
            503,
            stream=Body(b"not gzip at all"),
            headers={"content-encoding": "gzip", "x-request-id": "req_2"},
        )
    )
    err = await call(api, "chat")
    assert isinstance(err, InternalServerError)
    assert (err.status_code, err.request_id) == (503, "req_2")
    # A 200 that is not an event stream.
    page = "<html><body>" + "Please sign in. " * 100 + "</body></html>"
    server.post(CHAT_URL).mock(
        return_value=httpx.Response(
            200, text=page, headers={"content-type": "text/html", "x-request-id": "req_5"}
        )
    )
    err = await call(api, "chat")
    assert isinstance(err, UnexpectedResponseError)
    assert err.status_code == 200
    assert err.request_id == "req_5"
    for said in ("200", "text/html", "text/event-stream", "<html><body>Please sign in."):
        assert said in str(err), said
    assert len(str(err)) < 400  # the start of the body, not all of it
    server.post(CHAT_URL).mock(return_value=httpx.Response(200, content=b'{"ok": true}'))
    err = await call(api, "chat")  # no content type at all
    assert isinstance(err, UnexpectedResponseError)
    assert '{"ok": true}' in str(err)


# What arrived before each failure: a session, text, citations, a summary, an unknown event.
ARRIVED = [
    session("sess_1"),
    text("You have "),
    citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
    text("$120"),
    event("progress", '{"step": 2}'),
    citation(row(WEB_URL, web())),
    summary([row(ACCOUNT_SOURCE, account(ACCOUNT_A)), row(WEB_URL, web())]),
]


def assert_nothing_lost(err: SilviaError) -> None:
    assert isinstance(err, StreamError)
    turn = err.turn
    assert not turn.complete
    assert turn.session_id == "sess_1"
    assert turn.text == "You have $120"
    assert [(c.source, c.offset) for c in turn.inline_citations] == [
        (ACCOUNT_SOURCE, len("You have ")),
        (WEB_URL, len("You have $120")),
    ]
    assert [c.source for c in turn.citations] == [ACCOUNT_SOURCE, WEB_URL]
    assert turn.target_for(ACCOUNT_SOURCE) == AccountTarget(ACCOUNT_A, "plaid")
    assert turn.target_for(WEB_URL) == WebTarget(WEB_URL)
    assert [e.event for e in turn.unknown_events] == ["progress"]


async def test_a_stream_that_stops_early_keeps_everything_that_arrived(
    api: Api, server: respx.MockRouter
) -> None:
    cases: list[tuple[list[bytes], Exception | None, type[StreamError]]] = [
        ([*ARRIVED, error("overloaded", "overloaded_error"), done()], None, ServerStreamError),
        (ARRIVED, httpx.ReadError("reset"), StreamDisconnectedError),
        (ARRIVED, httpx.RemoteProtocolError("incomplete chunked read"), StreamDisconnectedError),
        (ARRIVED, httpx.ReadTimeout("idle"), StreamTimeoutError),
        (ARRIVED, None, IncompleteTurnError),
        ([*ARRIVED, b"event: done\ndata: {}\n"], None, IncompleteTurnError),  # cut short
    ]
    for chunks, fail, cls in cases:
        body = Body(chunks, fail=fail)
        route = server.post(CHAT_URL).mock(return_value=sse_response(body))
        events, err = await api.read(api.client())
        assert type(err) is cls, fail
        assert_nothing_lost(err)
        if fail is not None:
            assert isinstance(err.__cause__, type(fail)), fail
        if isinstance(err, ServerStreamError):
            assert err.error_type == "overloaded_error"
            assert "overloaded" in str(err)
            assert err.turn.error is not None
            assert err.turn.error.message == "overloaded"
        assert len(events) == len(ARRIVED) + (cls is ServerStreamError), cls  # and the error event
        assert route.call_count == 1, fail  # never sent again
        assert (err.request_id, err.session_id) == ("req_123", "sess_1"), cls
        if fail is None and cls is IncompleteTurnError:
            said = "the stream ended without `done` (request id req_123, session sess_1)"
            assert str(err) == said
        assert body.closed, fail
        route.reset()
    # until_done() raises the same error again; `chat.send` raises it too.
    body = Body(ARRIVED, fail=httpx.ReadError("reset"))
    server.post(CHAT_URL).mock(return_value=sse_response(body))
    async with api.stream(api.client()) as stream:
        with pytest.raises(StreamDisconnectedError) as first:
            await stream.events()
        with pytest.raises(StreamDisconnectedError) as second:
            await stream.until_done()
    assert second.value is first.value
    body = Body(ARRIVED, fail=httpx.ReadError("reset"))
    server.post(CHAT_URL).mock(return_value=sse_response(body))
    with pytest.raises(StreamDisconnectedError) as sent:
        await api.call(api.client().chat.send, "hi")
    assert_nothing_lost(sent.value)
    assert body.closed


@pytest.mark.parametrize("endpoint", ["chat", "session"])
async def test_a_status_error_keeps_the_response_read_and_without_the_token(
    api: Api, server: respx.MockRouter, endpoint: str
) -> None:
    body = json.dumps({"error": {"type": "rate_limit", "message": f"slow down {TOKEN}"}})
    answer = httpx.Response(
        429,
        headers={"x-echo": f"you sent {TOKEN}", "content-encoding": "gzip", "retry-after": "0"},
        content=gzip.compress(body.encode()),
    )
    route_for(server, endpoint).mock(return_value=answer)
    error = await call(api, endpoint, max_retries=0)
    assert isinstance(error, APIStatusError)
    response = error.response
    assert response is not None
    assert response.status_code == 429
    assert response.json()["error"]["message"] == "slow down <token>"  # decoded, read, blanked
    assert error.headers is response.headers
    assert error.headers["x-echo"] == "you sent <token>"
    assert error.headers["retry-after"] == "0"
    assert response.request.method == ("POST" if endpoint == "chat" else "GET")
    assert "authorization" not in response.request.headers
    assert TOKEN not in repr(vars(response)) + str(response.request.url)
    by_hand = APIStatusError("boom", status_code=418)  # no response, empty headers
    assert by_hand.response is None
    assert not by_hand.headers


async def test_a_connection_error_names_scheme_host_and_port_only_in_the_systems_words(
    api: Api,
) -> None:
    # httpx's sync and async transports word a refusal differently: both clients say the same.
    with socket.socket() as sock:  # bound, never listening: a connection is refused
        sock.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with pytest.raises(APIConnectionError) as caught:
            await api.session(api.client(base_url=base_url, max_retries=0), "secret-session")
    assert str(caught.value) == f"connection to {base_url} failed: ConnectError: Connection refused"

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("slow")

    client = api.client(http_client=api.http(transport=httpx.MockTransport(slow)), max_retries=0)
    with pytest.raises(APITimeoutError) as timed_out:
        await api.session(client, "secret-session")
    assert str(timed_out.value) == "timed out: ConnectTimeout (https://silvia.test:443)"
