"""A client of the reference server: `ReferenceServer().client()` / `.async_client()`, and loopback.

Each test runs the sync and the async client. The ready clients run on the
in-process transport, send the token the server requires (else any), take the
client constructor's keywords and close the httpx client they made. A chat POST
naming a session the server does not know answers 404 with the error body, as
the session GET does, on either runner; text holding lone surrogates streams
as a JSON server writes it (`\\udXXX`). With `deterministic=True` (what the
example notebook runs on) ids count up and timestamps are fixed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    NotFoundError,
    SilviaClient,
    parse_citation_target,
)
from silvia_client.testing import IN_PROCESS_URL, SCENARIO_HEADER, ReferenceServer, Say, Scenario

from ..depth import examples
from ._helpers import CHAT, http

pytestmark = pytest.mark.anyio
POOLED = "silvia://your-account/credit-card"
LONE = "Half \ud800 of a pair, \udfff, \udc00\ud800 backwards, and a whole one: \U0001f600 é."
RUNNERS = ("in-process", "loopback")


@asynccontextmanager
async def clients(
    server: ReferenceServer, runner: str = "in-process", **options: Any
) -> AsyncIterator[tuple[SilviaClient, AsyncSilviaClient]]:
    """A sync and an async client of `server`, in-process or over a loopback socket."""
    if runner == "in-process":
        with server.client(**options) as client:
            async with server.async_client(**options) as aclient:
                yield client, aclient
        return
    options = {"token": "t", "max_retries": 0, **options}
    with server.serve_loopback() as url, SilviaClient(base_url=url, **options) as client:
        async with AsyncSilviaClient(base_url=url, **options) as aclient:
            yield client, aclient


async def test_a_ready_client_streams_a_turn_and_reloads_it_with_the_constructors_keywords() -> (
    None
):
    expected = ReferenceServer().expected_turn("pooling")
    server = ReferenceServer()
    headers = {SCENARIO_HEADER: "pooling"}
    async with clients(server, timeout=3.0, idle_timeout=2.0, default_headers=headers) as (
        client,
        aclient,
    ):
        assert (type(client), type(aclient)) == (SilviaClient, AsyncSilviaClient)
        for each in (client, aclient):
            assert each.base_url == IN_PROCESS_URL
            assert each.timeout == httpx.Timeout(3.0)
            assert each.idle_timeout == 2.0
        turn, aturn = client.chat.send("hi"), await aclient.chat.send("hi")
        assert turn.session_id is not None
        assert aturn.session_id is not None
        reloaded = client.sessions.get(turn.session_id)
        areloaded = await aclient.sessions.get(aturn.session_id)
        # Clients of one server share its sessions.
        assert (await aclient.sessions.get(turn.session_id)).messages == reloaded.messages
    for played, session in ((turn, reloaded), (aturn, areloaded)):
        assert played.target_for(POOLED) == parse_citation_target(expected.target_for(POOLED))
        assert session.messages[-1].citations == played.citations
    assert len(server.sessions) == 2  # this server's store, not another's
    assert client._http.is_closed  # the httpx clients they made, closed with them
    assert aclient._http.is_closed


async def test_the_client_sends_the_token_the_server_requires_unless_told_otherwise() -> None:
    server = ReferenceServer(token="kit-s3cret")
    async with clients(server) as (client, aclient):
        assert client.chat.send("hello").complete
        assert (await aclient.chat.send("hello")).complete
        assert "kit-s3cret" not in repr(client) + repr(aclient)
    for runner in RUNNERS:
        async with clients(server, runner, token="a-wrong-token") as (client, aclient):
            with pytest.raises(AuthenticationError) as caught:
                client.chat.send("hello")
            with pytest.raises(AuthenticationError) as acaught:
                await aclient.chat.send("hello")
        for shown in (str(caught.value), str(acaught.value)):
            assert "a-wrong-token" not in shown, runner
            assert "kit-s3cret" not in shown, runner
    for make in (server.client, server.async_client):
        with httpx.Client() as own, pytest.raises(TypeError, match=r"server\.transport\(\)"):
            make(http_client=own)


async def test_a_turn_in_an_unknown_session_is_not_found_and_a_known_one_continues() -> None:
    for runner in RUNNERS:
        server = ReferenceServer()
        server.register(Scenario("lone", "Text holding lone surrogates.", script=(Say(LONE),)))
        seeded = server.seed_session([], session_id="sess_seeded")
        async with clients(server, runner, max_retries=0) as (client, aclient):
            with pytest.raises(NotFoundError) as sent:
                client.chat.send("hi", session_id="sess_never_created")
            with pytest.raises(NotFoundError) as streamed:
                async with aclient.chat.stream("hi", session_id="sess_never_created") as stream:
                    await stream.until_done()
            for error in (sent.value, streamed.value):
                assert (error.status_code, error.error_type) == (404, "not_found_error"), runner
                assert error.message == "Session not found."
                assert (error.request_id or "").startswith("req_")
            assert len(server.sessions) == 1, runner  # the seeded one: the refused turns made none
            # Text holding lone surrogates streams and reloads as a JSON server writes it.
            first = client.chat.send("/scenario lone")
            assert first.session_id is not None
            second = await aclient.chat.send("/scenario lone", session_id=first.session_id)
            third = client.chat.send("/scenario lone", session_id=seeded)
            history = await aclient.sessions.get(first.session_id)
            assert client.sessions.get(seeded).messages[-1].text == LONE, runner
        assert (second.session_id, third.session_id) == (first.session_id, seeded), runner
        assert (first.text, second.text, third.text) == (LONE, LONE, LONE), runner
        assert [m.role for m in history.messages] == ["user", "assistant"] * 2
        assert [m.text for m in history.messages[1::2]] == [LONE, LONE], runner
        assert sorted(server.sessions) == sorted([first.session_id, seeded])
    with ReferenceServer().client(max_retries=0) as other, pytest.raises(NotFoundError):
        other.chat.send("hi", session_id=first.session_id)  # known to another server only


def as_javascript_reads(text: str) -> str:
    """`text` with each surrogate pair joined into its character, as UTF-16 strings hold it."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet=st.characters() | st.integers(0xD800, 0xDFFF).map(chr), min_size=1))
@example("a\udc00b\U0001f600é")
@example("\ud800\udc00")  # two halves JavaScript reads as one character
def test_any_text_streams_as_utf8_json_that_reads_back(text: str) -> None:
    server = ReferenceServer()
    server.register(Scenario("say", "Says it.", script=(Say(text),)))
    with http(server) as client:
        body = client.post(CHAT, json={"message": "/scenario say"}).content
    datas = [
        line.removeprefix(b"data: ")
        for line in body.split(b"\n")
        if line.startswith(b'data: {"text"')
    ]
    texts = [json.loads(data.decode("utf-8", errors="strict"))["text"] for data in datas]
    assert as_javascript_reads("".join(texts)) == as_javascript_reads(text)
    if text == "a\udc00b\U0001f600é":  # escaped as JSON.stringify writes it (ES2019)
        assert b"".join(datas) == '{"text":"a\\udc00b😀é"}'.encode()
    if any(0xD800 <= ord(character) <= 0xDFFF for character in text):
        return  # a surrogate escaped (a pair's halves read back joined): checked above
    for data, part in zip(datas, texts, strict=True):
        plain = json.dumps({"text": part}, ensure_ascii=False, separators=(",", ":")).encode()
        assert data == plain  # text without surrogates goes out exactly as before


def test_deterministic_servers_store_the_same_sessions_others_random_ids() -> None:
    def run(server: ReferenceServer) -> tuple[list[str | None], str]:
        with server.client() as client:
            ids = [client.chat.send(m).session_id for m in ("hi", "/scenario market-data")]
            client.chat.send("again", session_id=ids[0])
        return ids, json.dumps([server.sessions.body(str(i)) for i in ids])

    ids, bodies = run(ReferenceServer(deterministic=True))
    assert run(ReferenceServer(deterministic=True)) == (ids, bodies)
    assert ids == ["sess_0001", "sess_0002"]
    messages = json.loads(bodies)[0]["messages"]
    assert [m["id"] for m in messages] == ["msg_0001", "msg_0002", "msg_0005", "msg_0006"]
    assert {m["created_at"] for m in messages} == {"2025-01-01T00:00:00.000Z"}
    ids, _ = run(ReferenceServer())
    again, _ = run(ReferenceServer())
    assert all(i and i.startswith("sess_") and len(i) == 37 for i in ids + again)
    assert set(ids).isdisjoint(again)
