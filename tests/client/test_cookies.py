"""The cookie jar is bounded (issue 28, finding 7): a server that sets cookies of new names on
every response no longer grows each request's `Cookie` header without end (356 KiB after 40
turns, before), while the sticky-session cookie a load balancer set on the first response is
still sent on the last request. A caller's own `http_client` keeps its own policy."""

from __future__ import annotations

import itertools

import httpx
import pytest

from silvia_client import AsyncSilviaClient
from silvia_client._base import BoundedCookieJar
from silvia_client._wire import DEFAULTS
from silvia_client.testing import ReferenceServer

from ..hostile import SSE, Connection, HostileServer, Request, Respond, chunk, event, head
from .conftest import Api

pytestmark = pytest.mark.anyio

TURNS = 5  # each sets 300 new names, six times the bound: past it from the first
PER_RESPONSE = 300
STICKY = "lb-sticky=node-7"


def cookie_flood() -> Respond:
    """Whole turns, each with 300 cookies of new names; the first also sets the sticky one."""
    turns = itertools.count(1)

    def respond(request: Request, connection: Connection) -> None:
        turn = next(turns)
        cookies = [f"t{turn}-c{i}=value-{i:04d}; Path=/" for i in range(PER_RESPONSE)]
        if turn == 1:
            cookies.insert(0, f"{STICKY}; Path=/")
        lines = "".join(f"set-cookie: {cookie}\r\n" for cookie in cookies).encode()
        events = (
            event("session", {"sessionId": "s1"}),
            event("text", {"text": "ok"}),
            event("done", {}),
        )
        body = b"".join(chunk(e) for e in events) + chunk(b"")
        connection.send(head(200, SSE, chunked=True)[:-2] + lines + b"\r\n" + body)

    return respond


def cookie_headers(server: HostileServer) -> list[str]:
    return [request.headers.get("cookie", "") for request in server.requests]


async def test_the_cookie_header_stays_bounded_and_keeps_the_sticky_session(api: Api) -> None:
    with HostileServer(cookie_flood()) as server:
        client = api.client(base_url=server.url)
        for _ in range(TURNS):
            assert (await api.turn(client)).complete
        # A caller's own http_client keeps its own policy: httpx's jar keeps every cookie.
        client = api.client(base_url=server.url, http_client=api.http())
        for _ in range(3):
            await api.turn(client)
    headers = cookie_headers(server)
    assert len(headers) == TURNS + 3
    for sent in headers[1:TURNS]:
        pairs = sent.split("; ")
        assert len(pairs) <= DEFAULTS.max_cookies
        assert len(sent.encode()) <= DEFAULTS.max_cookie_bytes
    assert STICKY in headers[TURNS - 1].split("; ")
    assert len(headers[-1].split("; ")) == 2 * PER_RESPONSE  # 300 + 300 on its third request


async def test_the_sdks_pools_and_the_testing_kits_have_the_bounded_jar() -> None:
    server = ReferenceServer()
    kit, async_kit = server.client(), server.async_client()
    production = AsyncSilviaClient(base_url="http://127.0.0.1:9")
    for client in (kit, async_kit, production):
        assert isinstance(client._pool.get().cookies.jar, BoundedCookieJar)
    kit.close()
    await async_kit.close()
    await production.close()


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
