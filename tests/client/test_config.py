"""Configuration: base URL and token, timeouts, headers, whose HTTP client is closed, the SDK's
own pools (one verifying TLS context, a bounded cookie jar); the one home of the defaults, and
the one table that checks every option (`RULES`).

Careless callers: wrong argument types and values fail before anything is sent, with a
`ConfigurationError` (a `ValueError` too) or Python's own `TypeError`, never an error of
httpx's; every number a careless or hostile caller passes is refused or kept as a value every
clock and socket can hold. The responses of a caller's own transport work however it built them.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import ssl
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import certifi
import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client._base import BoundedCookieJar
from silvia_client._deadline import RULES, check
from silvia_client._retries import RetryPolicy
from silvia_client._wire import DEFAULTS
from silvia_client.errors import (
    APIConnectionError,
    AuthenticationError,
    ConfigurationError,
    SilviaError,
)
from silvia_client.testing import ReferenceServer

from .conftest import Api, settled
from .sse import (
    BASE_URL,
    CHAT_URL,
    SSE_HEADERS,
    TOKEN,
    TurnNotingTimeouts,
    full_turn,
    json_response,
    sse_response,
)

pytestmark = pytest.mark.anyio


SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


def chat_route(server: respx.MockRouter, url: str = CHAT_URL) -> respx.Route:
    return server.post(url).mock(side_effect=lambda request: sse_response(full_turn()))


async def test_base_url_and_token_from_arguments_else_the_environment(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "https://env.silvia.test/")
    monkeypatch.setenv("SILVIA_TOKEN", "env-token-42")
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"base_url": BASE_URL, "token": TOKEN}, CHAT_URL, TOKEN),
        # The environment's; its trailing slash is not doubled.
        ({"base_url": None, "token": None}, "https://env.silvia.test/api/claude", "env-token-42"),
    ]
    for options, url, token in cases:
        route = chat_route(server, url)
        assert (await api.turn(api.client(**options))).complete
        request = route.calls.last.request
        assert request.url == url
        assert request.headers["authorization"] == f"Bearer {token}"
    # Without a token, no Authorization is sent.
    monkeypatch.delenv("SILVIA_TOKEN")
    route = chat_route(server)
    await api.turn(api.client(token=None))
    assert "authorization" not in route.calls.last.request.headers
    monkeypatch.setenv("SILVIA_TOKEN", "")  # an empty variable: no token either
    route.mock(return_value=httpx.Response(401, json={"error": "who are you?"}))
    with pytest.raises(AuthenticationError, match="SILVIA_TOKEN"):  # the 401 says where one goes
        await api.turn(api.client(token=None))
    assert "authorization" not in route.calls.last.request.headers


def test_a_bad_base_url_or_token_is_refused_unseen_naming_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    secret = "sk-hostile-0123456789-SECRET"
    not_printable = (
        "holds whitespace, a control character or a non-ASCII character "
        "(a trailing newline from a file?): a bearer token is printable ASCII"
    )
    not_absolute = "must be an absolute http(s) URL"
    query = "must not have a query (?) or a fragment (#)"
    cases = [
        *(("base_url", bad, not_absolute) for bad in ("ftp://x.test", "x.test")),
        *(("base_url", bad, query) for bad in ("https://x.test/?q=1", "https://x.test/#top")),
        # httpx would turn credentials in the URL into Basic auth, in place of the token.
        (
            "base_url",
            "https://someone:hunter2@silvia.test/base",
            "must not hold credentials (user:password@): "
            "pass the token as token=... or in SILVIA_TOKEN",
        ),
        *(("token", bad, not_printable) for bad in (f"{secret}\n", f"{secret}\r", f" {secret}")),
        *(("token", f"{secret}{inside}", not_printable) for inside in (" x", "ключ")),
    ]
    good: dict[str, Any] = {"base_url": BASE_URL, "token": TOKEN}
    for option, bad, said in cases:
        variable = f"SILVIA_{option.upper()}"
        named = variable if option == "base_url" else f"the {variable} environment variable"
        others = {name: value for name, value in good.items() if name != option}
        with pytest.raises(ConfigurationError) as given:
            SilviaClient(**{**good, option: bad})
        monkeypatch.setenv(variable, bad)
        with pytest.raises(ConfigurationError) as read:
            SilviaClient(**others)
        monkeypatch.delenv(variable)
        assert str(given.value) == f"{option} {said}", bad
        assert str(read.value) == f"{named} {said}", bad
        shown = repr(given.value) + repr(read.value)
        assert [part for part in ("hunter2", secret) if part in shown] == [], bad
    for missing in (None, ""):
        with pytest.raises(ConfigurationError, match="SILVIA_BASE_URL"):
            SilviaClient(base_url=missing, token=TOKEN)
    with pytest.raises(ConfigurationError) as caught:
        SilviaClient(base_url=BASE_URL, token="")
    assert str(caught.value) == (
        "token is empty: pass the token, or leave token out to use SILVIA_TOKEN"
    )
    for option in ("base_url", "token"):
        with pytest.raises(ConfigurationError, match=f"^{option} must be a str, not int$"):
            SilviaClient(**{**good, option: 5})
    # Only the trailing slashes go (not the X before them); an @ past the host is no credential.
    with SilviaClient(base_url="https://silvia.test/team@X//", token="t") as client:
        assert client.base_url == "https://silvia.test/team@X"


async def test_the_timeouts_requests_go_out_with(api: Api, server: respx.MockRouter) -> None:
    # The read phase bounds the wait for the head; the stream's reads after it wait
    # `idle_timeout` (test_deadline.py).
    server.post(CHAT_URL).mock(side_effect=(turns := TurnNotingTimeouts()))
    route = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    phases = {"connect": 3.0, "read": 40.0, "write": 5.0, "pool": 6.0}
    http = api.http(timeout=99)  # a caller's client with other defaults: the SDK's still apply
    for timeout, sent in [
        (httpx.Timeout(**phases), phases),
        (4.0, dict.fromkeys(phases, 4.0)),
    ]:
        for kwargs in ({}, {"http_client": http}):
            client = api.client(timeout=timeout, idle_timeout=7.5, **kwargs)
            await api.turn(client)
            assert turns.sent[-1] == sent, (timeout, kwargs)
            await api.session(client, "s1")
            assert route.calls.last.request.extensions["timeout"] == sent, (timeout, kwargs)
    # A call's own timeout replaces the client's, whole (a GET's: test_sessions.py).
    await api.turn(client, timeout=5.0)
    assert turns.sent[-1] == dict.fromkeys(phases, 5.0)
    await api.turn(client, timeout=httpx.Timeout(1.0, connect=2.0), idle_timeout=4.0)
    assert turns.sent[-1] == {"connect": 2.0, "read": 1.0, "write": 1.0, "pool": 1.0}


async def test_request_headers(api: Api, server: respx.MockRouter) -> None:
    chat = chat_route(server)
    get = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    # A caller's User-Agent replaces the SDK's, whatever its case; a caller's Accept cannot
    # break the protocol, nor an Authorization header the token, by default or per call.
    defaults = {"x-app": "notebook", "X-Trace": "t-1", "User-Agent": "my-app/1"}
    client = api.client(default_headers={**defaults, "Accept": "text/plain", "Authorization": "B"})
    await api.turn(client)
    await api.session(client, "s1")
    for route, accept in ((chat, "text/event-stream"), (get, "application/json")):
        headers = route.calls.last.request.headers
        assert (headers["x-app"], headers["x-trace"]) == ("notebook", "t-1")
        assert headers.get_list("accept") == [accept]
        assert headers.get_list("authorization") == [f"Bearer {TOKEN}"]
        assert headers.get_list("user-agent") == ["my-app/1"]
    # A call's extra headers go with that request only, over the defaults (a GET's:
    # test_sessions.py).
    extra = {"x-silvia-scenario": "demo", "X-App": "cli", "authorization": "Bearer other"}
    await api.turn(client, extra_headers=extra)
    first = chat.calls.last.request.headers
    assert (first["x-silvia-scenario"], first["x-app"]) == ("demo", "cli")
    assert first.get_list("authorization") == [f"Bearer {TOKEN}"]
    await api.turn(client)
    assert "x-silvia-scenario" not in chat.calls.last.request.headers
    assert chat.calls.last.request.headers["x-app"] == "notebook"
    await api.turn(api.client())
    assert chat.calls.last.request.headers["user-agent"].startswith("silvia-client/")


async def test_a_callers_http_client_is_used_and_a_response_read_already_works(
    api: Api,
) -> None:
    # Read already, by an event hook of the caller's client.
    seen: list[httpx.Request] = []
    hooked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(SESSION_BODY) if request.method == "GET" else sse_response(full_turn())

    def hook(response: httpx.Response) -> None:
        response.read()
        hooked.append(response.request.method)

    async def ahook(response: httpx.Response) -> None:
        await response.aread()
        hooked.append(response.request.method)

    hooks = {"response": [ahook if api.is_async else hook]}
    http = api.http(transport=httpx.MockTransport(handler), event_hooks=hooks)
    client = api.client(http_client=http)
    turn = await api.turn(client)
    assert (turn.complete, turn.text) == (True, "You have $120 in checking.")
    assert (await api.session(client, "s1")).id == "s1"
    assert [r.method for r in seen] == ["POST", "GET"]
    assert json.loads(seen[0].content) == {"message": "hi"}
    assert hooked == ["POST", "GET"]


REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the pool is made anyway


def refused_call() -> None:
    """One call of a new sync client, which makes its pool and fails to connect."""
    client = SilviaClient(token="sk-test", base_url=REFUSED, max_retries=0)
    with client, pytest.raises(APIConnectionError):
        client.sessions.get("s-1")


def test_the_sdks_own_pools_share_one_verifying_tls_context_made_as_httpxs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[ssl.SSLContext] = []
    make = httpx.create_ssl_context

    def counted() -> ssl.SSLContext:
        made.append(make())
        return made[-1]

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    # A CA setting no earlier test used, so the SDK makes its context here (the same
    # bundle httpx reads by default, under another name).
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))

    for _ in range(3):  # `_base.Pool` makes either client's pool
        refused_call()
    assert len(made) == 1, f"{len(made)} TLS contexts for three clients"
    assert made[0].verify_mode == ssl.CERT_REQUIRED
    assert made[0].check_hostname

    # Another setting, another context: the process's CA choice is honoured as httpx does.
    # (Another new name: an earlier test may have made the context of certifi's own.)
    other = tmp_path / "other-ca.pem"
    other.write_bytes(bundle.read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    refused_call()
    assert len(made) == 2


# A server that sets cookies of new names on every response once grew each request's
# `Cookie` header without end (356 KiB after 40 turns); a load balancer's sticky-session
# cookie, set on the first response, must still go out on the last request.
TURNS = 5  # each sets 300 new names, six times the bound: past it from the first
PER_RESPONSE = 300
STICKY = "lb-sticky=node-7"


def cookie_flood() -> Callable[[httpx.Request], httpx.Response]:
    """Whole turns, each with 300 cookies of new names; the first also sets the sticky one."""
    turns = itertools.count(1)

    def respond(request: httpx.Request) -> httpx.Response:
        turn = next(turns)
        cookies = [f"t{turn}-c{i}=value-{i:04d}; Path=/" for i in range(PER_RESPONSE)]
        if turn == 1:
            cookies.insert(0, f"{STICKY}; Path=/")
        headers = [*SSE_HEADERS.items(), *(("set-cookie", cookie) for cookie in cookies)]
        return httpx.Response(200, headers=headers, content=full_turn())

    return respond


async def test_the_cookie_header_stays_bounded_and_keeps_the_sticky_session(
    api: Api, server: respx.MockRouter
) -> None:
    route = server.post(CHAT_URL).mock(side_effect=cookie_flood())
    client = api.client()
    for _ in range(TURNS):
        assert (await api.turn(client)).complete
    # A caller's own http_client keeps its own policy: httpx's jar keeps every cookie.
    client = api.client(http_client=api.http())
    for _ in range(3):
        await api.turn(client)
    headers = [call.request.headers.get("cookie", "") for call in route.calls]
    assert len(headers) == TURNS + 3
    for sent in headers[1:TURNS]:
        pairs = sent.split("; ")
        assert len(pairs) <= DEFAULTS.max_cookies
        assert len(sent.encode()) <= DEFAULTS.max_cookie_bytes
    assert STICKY in headers[TURNS - 1].split("; ")
    assert len(headers[-1].split("; ")) == 2 * PER_RESPONSE  # 300 + 300 on its third request


async def test_the_testing_kits_have_the_sdks_bounded_jar() -> None:
    server = ReferenceServer()
    kit, async_kit = server.client(), server.async_client()
    for client in (kit, async_kit):
        assert isinstance(client._pool.get().cookies.jar, BoundedCookieJar)
    kit.close()
    await async_kit.close()


def test_a_cookie_update_is_kept_and_a_new_name_past_the_bound_is_not() -> None:
    jar = BoundedCookieJar(max_cookies=2, max_bytes=1000)
    cookies = httpx.Cookies(jar)
    cookies.set("a", "1", domain="x.test")
    cookies.set("b", "1", domain="x.test")
    cookies.set("c", "1", domain="x.test")  # a third name: not kept
    cookies.set("a", "2", domain="x.test")  # an update of one kept: kept
    assert {cookie.name: cookie.value for cookie in jar} == {"a": "2", "b": "1"}
    cookies.delete("a", domain="x.test")  # gone (as an expired cookie goes): room again
    cookies.set("c", "1", domain="x.test")
    assert sorted(cookie.name for cookie in jar) == ["b", "c"]
    small = BoundedCookieJar(max_cookies=50, max_bytes=20)
    httpx.Cookies(small).set("big", "x" * 40, domain="x.test")
    assert len(small) == 0


def test_the_constructors_defaults_are_the_one_defaults_value() -> None:
    names = "timeout idle_timeout max_event_bytes max_response_bytes max_retries retry_backoff"
    signature = inspect.signature(AsyncSilviaClient).parameters  # the sync one's generated
    for name in names.split():
        assert signature[name].default == getattr(DEFAULTS, name), name
    assert RetryPolicy() == RetryPolicy(
        max_retries=DEFAULTS.max_retries,
        initial_delay=DEFAULTS.retry_backoff,
        max_delay=DEFAULTS.max_backoff,
        max_retry_after=DEFAULTS.max_retry_after,
    )


def test_a_row_keeps_what_it_accepts_and_says_what_was_wrong() -> None:
    provider = SimpleNamespace(get_tracer=lambda *a, **k: None)  # any object with `get_tracer`
    ages = httpx.Timeout(5, read=2e9)
    for name, value, kept in [
        ("timeout", 5, httpx.Timeout(5.0)),
        ("timeout", None, httpx.Timeout(None)),
        ("idle_timeout", 0.5, 0.5),  # the values just inside each bound are kept
        ("deadline", DEFAULTS.max_seconds, DEFAULTS.max_seconds),
        ("deadline", None, None),
        ("deadline", math.inf, math.inf),
        ("max_event_bytes", 1, 1),
        ("max_retries", 0, 0),
        ("retry_backoff", 0, 0.0),
        ("extra_headers", {"X-A": "1"}, httpx.Headers({"x-a": "1"})),
        ("default_headers", None, httpx.Headers()),
        ("tracer_provider", provider, provider),
        ("session_id", " ", " "),  # only the message is refused blank
    ]:
        assert check(name, value) == kept, (name, value)
    # A caller reads the error to fix the call: each names the argument and what was wrong.
    refused: list[tuple[str, object, str]] = [
        ("extra_body", {"a": {1}}, "extra_body: cannot be sent as JSON (TypeError)"),
        ("extra_headers", {"a": 1}, "extra_headers: header names and values must be str or bytes"),
        ("extra_headers", {"é": "v"}, "extra_headers: UnicodeEncodeError"),
        ("timeout", ages, "timeout: the read timeout must be at most 1e+09 s"),
        ("session_id", "", "session_id must not be empty (leave it out for a new session)"),
        ("timeout", 0, "timeout: the connect timeout must be above 0 seconds (None: none)"),
        ("message", " \n", "message must not be empty or only whitespace"),
    ]
    for name, bad, message in refused:
        with pytest.raises(ConfigurationError) as caught:
            check(name, bad)
        assert str(caught.value) == message, (name, bad)
    # A value of no accepted type is refused with the row's own message, naming the argument.
    for name, rule in RULES.items():
        if rule.type_error:  # the message and the session id: as Python's own functions
            with pytest.raises(TypeError, match=f"^{name} must be a str, not object$"):
                check(name, object())
            continue
        with pytest.raises(ConfigurationError) as caught:
            check(name, object())
        assert str(caught.value) == rule.error
        assert str(caught.value).startswith(name)


SECONDS = ("timeout", "idle_timeout", "deadline", "retry_backoff")
WHOLE = ("max_event_bytes", "max_response_bytes", "max_retries")
# Each option, values it refuses. What no clock can honour is refused for every option in
# seconds; `retry_backoff` is the `RetryPolicy`'s (test_retries.py).
NO_CLOCK = [math.nan, -1, 10**400, 1e10, True, "5"]
BAD: dict[str, list[Any]] = {
    "max_retries": [-1, 1.5, "2"],
    "timeout": [*NO_CLOCK, 0, "10", httpx.Timeout(5.0, read=-1), httpx.Timeout(5.0, connect=0)],
    "idle_timeout": [*NO_CLOCK, 0, -5],
    "deadline": [*NO_CLOCK, 0, "10"],
    "retry_backoff": [*NO_CLOCK, math.inf],
    "max_event_bytes": [0, -1, 1.5, True, "10"],
    "max_response_bytes": [0, -1, 1.5, True, "10", 2.5],
    "default_headers": [["x"], {"x-a": 1}],
    "extra_headers": ["x-a: 1"],
    "extra_body": [["a"], {1: "a"}, {"a": {1, 2}}, {"a": math.nan}],
    "extra_query": [{"a": True}, {"a": None}, {"a": ["x"]}, "a=1"],
    "wire": ["v2"],
    "token": [1234567890],
    "propagate_context": [1],
    "tracer_provider": [object()],
}


async def test_a_bad_value_is_refused_wherever_it_is_given_before_anything_is_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    client = api.client()
    takers: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (type(client), api.client),
        (client.with_options, client.with_options),
        (client.chat.stream, partial(api.turn, client)),
        (client.sessions.get, partial(api.call, client.sessions.get, "s1")),
    ]
    for name, values in BAD.items():
        for value in values:
            for method, call in takers:
                if name in inspect.signature(method).parameters:
                    with pytest.raises(ConfigurationError, match=name):
                        await settled(call(**{name: value}))
    # The message and the session id: a wrong type is Python's own TypeError, raised by
    # `chat.stream` itself. (No route answers a GET: one sent would fail the test.)
    for message in [None, 42, b"hi", ["hi"], {"message": "hi"}]:
        kind = type(message).__name__
        with pytest.raises(TypeError, match=f"^message must be a str, not {kind}$"):
            client.chat.stream(message)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="message cannot be encoded") as caught:
        await api.turn(client, "hi \ud800")
    assert isinstance(caught.value, ConfigurationError)
    bad_ids: list[tuple[Any, type[Exception], str]] = [
        (42, TypeError, "session_id must be a str"),
        (b"s1", TypeError, "session_id must be a str"),
        ("s\udc00", ValueError, "session_id cannot be encoded"),
        ("", ValueError, "session_id must not be empty"),
    ]
    for session_id, error, match in bad_ids:  # a GET's: test_sessions.py
        with pytest.raises(error, match=match):
            await api.turn(client, "hi", session_id=session_id)
    with pytest.raises(ConfigurationError, match="65,536"):  # no URL can carry it
        await api.session(client, "s" * 70_000)
    assert not route.calls
    with pytest.raises(ConfigurationError, match=r"propagate_context=True needs a tracer_"):
        AsyncSilviaClient(base_url=BASE_URL, propagate_context=True)
    with pytest.raises(ConfigurationError, match=r"httpx\.Client"):
        SilviaClient(base_url=BASE_URL, token=TOKEN, http_client=httpx.AsyncClient())  # type: ignore[arg-type]
    with httpx.Client() as http, pytest.raises(ConfigurationError, match=r"httpx\.AsyncClient"):
        AsyncSilviaClient(base_url=BASE_URL, token=TOKEN, http_client=http)  # type: ignore[arg-type]


numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**15, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_subnormal=True, min_value=0, max_value=1e-300),
    st.sampled_from([0, -0.0, 0.0, math.inf, -math.inf, math.nan, True, False, sys.maxsize]),
)


def _kept_is_holdable(name: str, kept: Any) -> None:
    values = kept.as_dict().values() if isinstance(kept, httpx.Timeout) else [kept]
    for value in values:
        if value is None or value == math.inf:
            assert name in ("idle_timeout", "deadline") or value is None
            continue
        assert not isinstance(value, bool)
        assert value >= 0
        if name in SECONDS:
            assert value <= DEFAULTS.max_seconds


@pytest.mark.parametrize("name", SECONDS + WHOLE)
@given(value=numbers)
def test_every_number_is_kept_or_refused_with_a_configuration_error(name: str, value: Any) -> None:
    refused: ConfigurationError | None = None
    try:
        kept = check(name, value)
    except ConfigurationError as error:
        refused = error
    if refused is not None:
        assert isinstance(refused, ValueError)
        assert str(refused).startswith(name)
    else:
        _kept_is_holdable(name, kept)


def rules_table() -> str:
    """`RULES` as the Markdown table the configuration page shows."""
    rows = ["| argument | refused with |", "| --- | --- |"]
    for name, rule in RULES.items():
        otherwise = "`TypeError` for another type; else " if rule.type_error else ""
        rows.append(f"| `{name}` | {otherwise}`ConfigurationError`: {rule.error} |")
    return "\n".join(rows)


def test_the_configuration_page_shows_the_table_as_the_code_has_it() -> None:
    table = rules_table()
    for name in RULES:
        assert f"| `{name}` |" in table
    assert "TypeError" in table.split("`message`", 1)[1].split("\n", 1)[0]
    page = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    shown = page.split("<!-- rules-table -->\n", 1)[1].split("\n<!-- /rules-table -->", 1)[0]
    assert shown == rules_table()


# What a careless or hostile caller passes (a number: the tests above): each call returns, or
# raises a `SilviaError` (a `TypeError` for a value of the wrong type), never an httpx error.
SESSION_IDS: list[Any] = ["s" * 70_000, "..", ".", "a/b?c#d", "\x00\r\n", "a\ud800", "", " "]
SESSION_IDS += ["é" * 30_000, None, 42]
MESSAGES: list[Any] = ["", " \n", "a\ud800", "\x00", "x" * 1_000_000, None, 3.5, b"hi"]
HEADERS: list[Any] = [{"x-a": "line\r\nbreak"}, {"x-a": "\x00"}, {"bad name": "v"}, {"x-a": "ü€"}]
HEADERS += [{"": "v"}, {"x-a": 5}, "not a mapping"]


async def test_no_public_method_of_either_client_lets_an_httpx_error_out(api: Api) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(SESSION_BODY) if request.method == "GET" else sse_response(full_turn())

    client = api.client(http_client=api.http(transport=httpx.MockTransport(handler)))
    send, get = client.chat.send, client.sessions.get
    calls: list[tuple[str, Callable[[], object]]] = []
    for sid in SESSION_IDS:
        calls.append((f"get({sid!r:.20})", partial(get, sid)))
        calls.append((f"get_raw({sid!r:.20})", partial(client.sessions.get_raw, sid)))
        calls.append((f"send(session_id={sid!r:.20})", partial(send, "hi", session_id=sid)))
    calls += [(f"send({message!r:.20})", partial(send, message)) for message in MESSAGES]
    for headers in HEADERS:
        name = f"{headers!r:.30}"
        calls.append((f"send(extra_headers={name})", partial(send, "hi", extra_headers=headers)))
        calls.append((f"get(extra_headers={name})", partial(get, "s", extra_headers=headers)))
        given = partial(client.with_options, default_headers=headers)
        calls.append((f"with_options(default_headers={name})", given))
    escaped: dict[str, str] = {}
    for name, call in calls:
        try:
            await settled(call())
        except (SilviaError, TypeError):
            pass
        except BaseException as error:  # anything else is the failure this test looks for
            escaped[name] = repr(error)
    assert not escaped, escaped
    # A base URL httpx would refuse; on 127.0.0.1, without retries, one let through fails
    # at once, with no name to look up.
    for base_url in ["http://127.0.0.1:9/" + "p" * 70_000, "http://127.0.0.1:99999"]:
        with pytest.raises(SilviaError):
            SilviaClient(base_url=base_url, token="t", max_retries=0).sessions.get("s")
