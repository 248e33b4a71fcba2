"""Privacy: the bearer token and an account's provider never show.

Not in a repr, an exception, or a log record. Providers are checked two ways:
the vendor names are absent, and every repr is the same as for the same data
with the provider left out (so a vendor name nobody thought of is covered too).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import (
    AuthenticationError,
    ConfigurationError,
    SilviaError,
    StreamError,
)

from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_SOURCE,
    BASE_URL,
    CHAT_URL,
    TOKEN,
    Body,
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


def leaks(value: object) -> list[str]:
    out = str(value)
    return [secret for secret in (TOKEN, *VENDORS) if secret in out]


def chain(error: BaseException) -> list[BaseException]:
    """The error, and every cause and context behind it."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def assert_error_hides_secrets(error: BaseException) -> None:
    for link in chain(error):
        assert leaks(str(link)) == [], (type(link).__name__, str(link))
        assert leaks(repr(link)) == [], (type(link).__name__, repr(link))
    if isinstance(error, StreamError):
        assert leaks(repr(error.turn)) == []


# --------------------------------------------------------------------- wire data holding providers


def acct(account_id: str, provider: str | None) -> dict[str, Any]:
    return {"kind": "account", "accountId": account_id, "provider": provider}


def rows(provider: str | None) -> list[Any]:
    return [
        {"source": ACCOUNT_SOURCE, "title": "Checking", "target": acct(ACCOUNT_A, provider)},
        {
            "source": "silvia://your-account/cards",
            "target": {
                "kind": "accounts",
                "accounts": [
                    {"accountId": ACCOUNT_A, "provider": provider},
                    {"accountId": ACCOUNT_B, "provider": provider},
                ],
            },
        },
        # Malformed rows that hold a provider: no source; a source of the wrong type.
        {"title": "no source", "target": acct(ACCOUNT_B, provider)},
        {"source": 7, "target": acct(ACCOUNT_B, provider), "provider": provider},
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


# --------------------------------------------------------------------------------------- the token


def test_token_not_in_client_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for client in (
        SilviaClient(base_url=BASE_URL, token=TOKEN),
        AsyncSilviaClient(base_url=BASE_URL, token=TOKEN),
        SilviaClient(base_url=BASE_URL),  # the token from the environment
    ):
        assert TOKEN not in repr(client)
        assert TOKEN not in str(client)
        assert TOKEN not in repr(vars(client))


Scenario = Callable[[Api, respx.MockRouter], Awaitable[Any]]


def chat_failing_with(respond: Callable[[httpx.Request], httpx.Response]) -> Scenario:
    async def run(api: Api, server: respx.MockRouter) -> Any:
        server.post(CHAT_URL).mock(side_effect=respond)
        return await api.turn(api.client())

    return run


def session_failing_with(respond: Callable[[httpx.Request], httpx.Response]) -> Scenario:
    async def run(api: Api, server: respx.MockRouter) -> Any:
        server.get(SESSION_PATH).mock(side_effect=respond)
        return await api.session(api.client(), "s1")

    return run


def raise_(error: Exception) -> Callable[[httpx.Request], httpx.Response]:
    def respond(request: httpx.Request) -> httpx.Response:
        raise error

    return respond


def stream_of(body: Body) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: sse_response(body)


FAILURES: dict[str, Scenario] = {
    "401": chat_failing_with(lambda r: httpx.Response(401, json={"error": "bad token"})),
    "403": chat_failing_with(lambda r: httpx.Response(403, text="no")),
    "429": chat_failing_with(lambda r: httpx.Response(429, headers={"retry-after": "1"})),
    "500": chat_failing_with(lambda r: httpx.Response(500)),
    "not-a-stream": chat_failing_with(
        lambda r: httpx.Response(200, json={"citations": rows("plaid")})
    ),
    "connect": chat_failing_with(raise_(httpx.ConnectError("refused"))),
    "read-before-headers": chat_failing_with(raise_(httpx.ReadError("reset"))),
    "dropped": chat_failing_with(
        stream_of(Body(turn_body("plaid", b""), fail=httpx.ReadError("x")))
    ),
    "idle": chat_failing_with(
        stream_of(Body(turn_body("plaid", b""), fail=httpx.ReadTimeout("x")))
    ),
    "error-event": chat_failing_with(stream_of(Body(turn_body("plaid", error("nope"))))),
    "no-done": chat_failing_with(stream_of(Body(turn_body("snaptrade", b"")))),
    "session-404": session_failing_with(lambda r: httpx.Response(404)),
    "session-500": session_failing_with(lambda r: httpx.Response(500, text="down")),
    "session-not-json": session_failing_with(lambda r: httpx.Response(200, text="<html>")),
    "session-not-a-session": session_failing_with(
        lambda r: json_response({"messages": {"0": session_body("snaptrade")["messages"][0]}})
    ),
    "session-connect": session_failing_with(raise_(httpx.ConnectError("refused"))),
}


async def test_no_secret_in_any_failure(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for name, scenario in FAILURES.items():
        try:
            await scenario(api, server)
        except SilviaError as error:
            assert_error_hides_secrets(error)
        else:
            pytest.fail(f"{name}: no error")


# ------------------------------------------------------------------------------------- log records


async def test_no_secret_in_log_records(
    api: Api, server: respx.MockRouter, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    server.post(CHAT_URL).mock(
        side_effect=[
            sse_response(turn_body("snaptrade")),
            httpx.Response(401, json={"error": {"type": "auth", "message": "bad token"}}),
        ]
    )
    server.get(SESSION_PATH).mock(
        side_effect=[httpx.ConnectError("refused"), json_response(session_body("plaid"))]
    )
    client = api.client()
    turn = await api.turn(client)  # a full turn, with malformed rows holding providers
    assert turn.complete
    await api.session(client, "s1")  # a retried GET
    with pytest.raises(SilviaError):
        await api.turn(client)  # a failing request
    ours = [r for r in caplog.records if r.name.startswith("silvia_client")]
    # The records this test relies on exist (a silent SDK would pass vacuously).
    assert any("retrying" in r.getMessage() for r in ours)
    assert any("401" in r.getMessage() for r in ours)
    assert any("malformed" in r.getMessage() for r in ours)
    for record in caplog.records:
        assert leaks(record.getMessage()) == [], record.getMessage()
        assert leaks(repr(record.args)) == []
        assert leaks(repr(record.__dict__)) == []


# -------------------------------------------------------- reprs: same with the provider or without


async def test_events_and_turn_reprs_do_not_depend_on_the_provider(
    api: Api, server: respx.MockRouter
) -> None:
    reprs: list[tuple[str, str, str]] = []
    for provider in ("snaptrade", "manual", None):
        body = turn_body(provider)
        server.post(CHAT_URL).mock(side_effect=lambda r, body=body: sse_response(body))
        events, failure = await api.read(api.client())
        assert failure is None
        turn = await api.turn(api.client())
        assert turn.citation_errors  # the malformed summary rows are reported ...
        details = [repr(e) for e in turn.citation_errors] + [e.reason for e in turn.citation_errors]
        reprs.append((repr(events), repr(turn) + repr(turn.citations), repr(details)))
    with_vendor, with_manual, without = reprs
    assert with_vendor == without
    assert with_manual == without
    assert leaks(with_vendor) == []


async def test_session_reprs_do_not_depend_on_the_provider(
    api: Api, server: respx.MockRouter
) -> None:
    reprs: list[str] = []
    for provider in ("plaid", "manual", None):
        payload = session_body(provider)
        server.get(SESSION_PATH).mock(return_value=json_response(payload))
        got = await api.session(api.client(), "s1")
        (msg,) = got.messages
        assert msg.citation_errors  # malformed rows were reported, without their content
        assert msg.inline_citation_errors
        errors = (*msg.citation_errors, *msg.inline_citation_errors)
        reprs.append(
            repr(got)
            + repr(msg)
            + repr(msg.citations)
            + repr(msg.inline_citations)
            + repr(errors)
            + str([e.reason for e in errors])
        )
    assert reprs[0] == reprs[2]
    assert reprs[1] == reprs[2]
    assert leaks(reprs[0]) == []


async def test_unexpected_response_hides_the_provider(api: Api, server: respx.MockRouter) -> None:
    messages: list[str] = []
    for provider in ("snaptrade", "plaid"):
        payload = json.dumps({"citations": rows(provider)})
        server.post(CHAT_URL).mock(return_value=httpx.Response(200, text=payload))
        server.get(SESSION_PATH).mock(return_value=httpx.Response(200, text=payload[:150]))
        for endpoint in ("chat", "session"):
            client = api.client()
            with pytest.raises(SilviaError) as info:
                await api.request(client, endpoint)
            messages.append(str(info.value))
    assert "accountId" in messages[0]  # the start of the body is still shown
    assert messages[:2] == messages[2:]


def test_a_token_the_server_echoes_is_blanked_unless_too_short_to_be_one() -> None:
    # Under 8 characters a token cannot be a secret; blanking it would blank words.
    for token, shown in [("sk-live-0123456789abcdef", "bad <token>"), ("abc", "bad abc")]:

        def handler(request: httpx.Request, token: str = token) -> httpx.Response:
            return httpx.Response(401, json={"error": {"type": "auth", "message": f"bad {token}"}})

        http = httpx.Client(transport=httpx.MockTransport(handler))
        with (
            SilviaClient(base_url="http://silvia.test", token=token, http_client=http) as client,
            pytest.raises(AuthenticationError) as caught,
        ):
            client.chat.stream("hi").until_done()
        assert caught.value.message == shown, token
        assert shown in str(caught.value), token
    assert "0123456789abcdef" not in repr(caught.value.body) + str(caught.value)


def test_credentials_in_the_base_url_are_refused_unseen() -> None:
    # httpx would turn them into Basic auth, in place of the bearer token.
    for cls in (SilviaClient, AsyncSilviaClient):
        with pytest.raises(ConfigurationError, match="credentials") as caught:
            cls(base_url="https://someone:hunter2@silvia.test/base", token="t")
        assert "hunter2" not in str(caught.value)
        assert "hunter2" not in repr(caught.value)
