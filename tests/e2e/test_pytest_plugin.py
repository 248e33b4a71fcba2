"""The pytest plugin's fixtures, used as an integrator's tests would use them."""

from __future__ import annotations

import pytest

from silvia_client import AsyncSilviaClient, NotFoundError, SilviaClient
from silvia_client.citations import AccountsTarget, resolve_citation
from silvia_client.testing import ReferenceServer, Say, Scenario

pytest_plugins = ["pytester"]


def test_silvia_client_streams_a_turn_in_process(silvia_client: SilviaClient) -> None:
    with silvia_client.chat.stream("/scenario accounts") as stream:
        turn = stream.until_done()
    [citation] = turn.citations
    assert isinstance(citation.target, AccountsTarget)
    links = [link.href for link in resolve_citation(citation).links]
    assert links == [f"/accounts/{ref.account_id}" for ref in citation.target.accounts]
    assert turn.session_id is not None
    assert silvia_client.sessions.get(turn.session_id).messages[-1].citations == turn.citations


def test_the_client_talks_to_the_tests_own_server(
    silvia_server: ReferenceServer, silvia_client: SilviaClient
) -> None:
    silvia_server.register(Scenario("hello", "A greeting.", script=(Say("Hi there."),)))
    with silvia_client.chat.stream("/scenario hello") as stream:
        assert stream.until_done().text == "Hi there."
    assert len(silvia_server.sessions) == 1


def test_each_test_gets_a_fresh_server(silvia_server: ReferenceServer) -> None:
    assert len(silvia_server.sessions) == 0
    assert "hello" not in silvia_server.scenarios


@pytest.mark.anyio
async def test_async_silvia_client_streams_a_turn(async_silvia_client: AsyncSilviaClient) -> None:
    async with async_silvia_client.chat.stream("hello") as stream:
        turn = await stream.until_done()
    assert turn.complete
    assert turn.session_id is not None
    session = await async_silvia_client.sessions.get(turn.session_id)
    assert session.messages[-1].text == turn.text


def test_the_async_client_is_closed_after_its_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import pytest

        seen = []

        def test_uses_it(async_silvia_client):
            seen.append(async_silvia_client)

        def test_it_was_closed():
            [client] = seen
            assert client._http.is_closed
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_silvia_loopback_client_goes_over_real_http(
    silvia_loopback_client: SilviaClient, silvia_loopback_url: str
) -> None:
    assert silvia_loopback_url.startswith("http://127.0.0.1:")
    with silvia_loopback_client.chat.stream("hello") as stream:
        turn = stream.until_done()
    assert turn.complete
    with pytest.raises(NotFoundError):
        silvia_loopback_client.sessions.get("sess_nobody")
