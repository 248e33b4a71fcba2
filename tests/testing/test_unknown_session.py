"""A chat POST naming a session the reference server does not know: 404, as a real server.

The wire contract's row "a session the server does not know" is a [default]:
a chat POST whose `sessionId` names no session answers `404` with the error
body, as the session GET does. Each SDK test runs sync and async, on the
in-process transport and on the loopback server; nothing is stored by the
refused turn, and a session the server made (a first turn without an id) or
was given (`seed_session`) is continued as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx
import pytest

from silvia_client import AsyncSilviaClient, NotFoundError, SilviaClient
from silvia_client.testing import IN_PROCESS_URL, SCENARIO_HEADER, ReferenceServer

from ._helpers import AUTH

CHAT = "/api/claude"
SESSIONS = "/api/chat/sessions/"
RUNNERS = pytest.mark.parametrize("runner", ["in-process", "loopback"])


@contextmanager
def sync_client(server: ReferenceServer, runner: str) -> Iterator[SilviaClient]:
    if runner == "in-process":
        with server.client(max_retries=0) as client:
            yield client
        return
    with (
        server.serve_loopback() as url,
        SilviaClient(base_url=url, token="t", max_retries=0) as client,
    ):
        yield client


@asynccontextmanager
async def async_client(server: ReferenceServer, runner: str) -> AsyncIterator[AsyncSilviaClient]:
    if runner == "in-process":
        async with server.async_client(max_retries=0) as client:
            yield client
        return
    with server.serve_loopback() as url:
        async with AsyncSilviaClient(base_url=url, token="t", max_retries=0) as client:
            yield client


def assert_not_found(error: NotFoundError) -> None:
    assert error.status_code == 404
    assert error.error_type == "not_found_error"
    assert error.message == "Session not found."
    assert error.request_id is not None
    assert error.request_id.startswith("req_")


# -- the SDK sees a NotFoundError ----------------------------------------------


@RUNNERS
def test_a_turn_in_an_unknown_session_raises_not_found(runner: str) -> None:
    server = ReferenceServer()
    with sync_client(server, runner) as client:
        with pytest.raises(NotFoundError) as sent:
            client.chat.send("hi", session_id="sess_never_created")
        with (
            pytest.raises(NotFoundError) as streamed,
            client.chat.stream("hi", session_id="sess_never_created") as stream,
        ):
            stream.until_done()
        with pytest.raises(NotFoundError):
            client.sessions.get("sess_never_created")  # the refused turn made none
    assert_not_found(sent.value)
    assert_not_found(streamed.value)
    assert len(server.sessions) == 0


@pytest.mark.anyio
@RUNNERS
async def test_an_async_turn_in_an_unknown_session_raises_not_found(runner: str) -> None:
    server = ReferenceServer()
    async with async_client(server, runner) as client:
        with pytest.raises(NotFoundError) as sent:
            await client.chat.send("hi", session_id="sess_never_created")
        with pytest.raises(NotFoundError) as streamed:
            async with client.chat.stream("hi", session_id="sess_never_created") as stream:
                await stream.until_done()
        with pytest.raises(NotFoundError):
            await client.sessions.get("sess_never_created")
    assert_not_found(sent.value)
    assert_not_found(streamed.value)
    assert len(server.sessions) == 0


@RUNNERS
def test_a_session_the_server_made_or_was_given_is_continued(runner: str) -> None:
    server = ReferenceServer()
    seeded = server.seed_session([], session_id="sess_seeded")
    with sync_client(server, runner) as client:
        first = client.chat.send("hi")
        assert first.session_id is not None
        second = client.chat.send("and now?", session_id=first.session_id)
        third = client.chat.send("hello", session_id=seeded)
        history = client.sessions.get(first.session_id)
    assert (second.session_id, third.session_id) == (first.session_id, seeded)
    assert [m.role for m in history.messages] == ["user", "assistant"] * 2
    assert sorted(server.sessions) == sorted([first.session_id, seeded])


@pytest.mark.anyio
@RUNNERS
async def test_an_async_session_the_server_made_or_was_given_is_continued(runner: str) -> None:
    server = ReferenceServer()
    seeded = server.seed_session([], session_id="sess_seeded")
    async with async_client(server, runner) as client:
        first = await client.chat.send("hi")
        assert first.session_id is not None
        second = await client.chat.send("and now?", session_id=first.session_id)
        third = await client.chat.send("hello", session_id=seeded)
        history = await client.sessions.get(first.session_id)
    assert (second.session_id, third.session_id) == (first.session_id, seeded)
    assert [m.role for m in history.messages] == ["user", "assistant"] * 2
    assert sorted(server.sessions) == sorted([first.session_id, seeded])


# -- on the wire ---------------------------------------------------------------


@RUNNERS
def test_the_404_carries_the_contracts_error_body_and_a_request_id(runner: str) -> None:
    server = ReferenceServer()
    body = {"message": "hi", "sessionId": "sess_never_created"}
    if runner == "in-process":
        with httpx.Client(
            transport=server.transport(), base_url=IN_PROCESS_URL, headers=AUTH
        ) as http:
            response = http.post(CHAT, json=body)
            reload = http.get(SESSIONS + "sess_never_created")
    else:
        with server.serve_loopback() as url, httpx.Client(base_url=url, headers=AUTH) as http:
            response = http.post(CHAT, json=body)
            reload = http.get(SESSIONS + "sess_never_created")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"].startswith("req_")
    assert response.json() == {
        "error": {"type": "not_found_error", "message": "Session not found."}
    }
    assert reload.status_code == 404
    assert reload.json() == response.json()  # the same body the session GET gives


def test_what_is_refused_first() -> None:
    for body, headers, status in [
        # A body the server cannot read is refused before the session is looked up.
        ({"message": "", "sessionId": "sess_never_created"}, {}, 400),
        ({"message": "hi", "sessionId": ""}, {}, 400),
        ({"message": "/scenario no-such-thing", "sessionId": "sess_never_created"}, {}, 400),
        # A status scenario answers with its own status, whatever the session.
        (
            {"message": "hi", "sessionId": "sess_never_created"},
            {SCENARIO_HEADER: "status-500"},
            500,
        ),
        ({"message": "/scenario status-429", "sessionId": "sess_never_created"}, {}, 429),
        # Otherwise the unknown session is the answer, whatever the scenario.
        ({"message": "/scenario pooling", "sessionId": "sess_never_created"}, {}, 404),
        (
            {"message": "hi", "sessionId": "sess_never_created"},
            {SCENARIO_HEADER: "fault-drop"},
            404,
        ),
    ]:
        try:
            server = ReferenceServer()
            with httpx.Client(
                transport=server.transport(), base_url=IN_PROCESS_URL, headers=AUTH
            ) as http:
                response = http.post(CHAT, json=body, headers=headers)
            assert response.status_code == status
            assert set(response.json()["error"]) == {"type", "message"}
            assert len(server.sessions) == 0
        except AssertionError as error:
            raise AssertionError(f"case {(body, headers, status)!r}") from error


def test_a_session_known_to_one_server_is_unknown_to_another() -> None:
    first, other = ReferenceServer(), ReferenceServer()
    with first.client() as client:
        session_id = client.chat.send("hi").session_id
    assert session_id is not None
    with other.client(max_retries=0) as client, pytest.raises(NotFoundError):
        client.chat.send("hi", session_id=session_id)
