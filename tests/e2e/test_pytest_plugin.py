"""The pytest plugin's fixtures as an integrator's tests use them, also under pytest-xdist
(`-n 2`), and what loading the two plugins costs a run that does not use them.
"""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from silvia_client import AsyncSilviaClient, NotFoundError, SilviaClient
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer, Say, Scenario

pytest_plugins = ["pytester"]


@pytest.mark.anyio
async def test_every_fixture_serves_the_tests_own_server_and_the_older_names_are_aliases(
    silvia_server: ReferenceServer,
    silvia: SilviaClient,
    silvia_client: SilviaClient,
    async_silvia: AsyncSilviaClient,
    async_silvia_client: AsyncSilviaClient,
    silvia_transport: httpx.BaseTransport,
    silvia_loopback_client: SilviaClient,
    silvia_loopback_url: str,
) -> None:
    assert silvia_client is silvia
    assert async_silvia_client is async_silvia
    for client in (silvia, async_silvia):
        assert client.timeout.read == 5.0
        assert client.idle_timeout == 5.0
    turn = silvia.chat.send("/scenario accounts")
    assert turn.session_id is not None
    assert turn.citations
    # One server behind them all: the async client, the transport, real HTTP on loopback.
    session = await async_silvia.sessions.get(turn.session_id)
    assert session.messages[-1].citations == turn.citations
    silvia_server.register(Scenario("hello", "A greeting.", script=(Say("Hi there."),)))
    assert (await async_silvia.chat.send("/scenario hello")).text == "Hi there."
    with httpx.Client(transport=silvia_transport, base_url=IN_PROCESS_URL) as http:
        auth = {"authorization": "Bearer t"}
        assert http.get(f"/api/chat/sessions/{turn.session_id}", headers=auth).status_code == 200
    assert silvia_loopback_url.startswith("http://127.0.0.1:")
    assert silvia_loopback_client.sessions.get(turn.session_id).id == turn.session_id
    with pytest.raises(NotFoundError):
        silvia_loopback_client.sessions.get("sess_nobody")
    assert len(silvia_server.sessions) == 2


def test_the_async_clients_are_closed_after_their_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        seen = []

        def test_uses_them(async_silvia, async_silvia_client):
            seen.extend([async_silvia, async_silvia_client])

        def test_they_were_closed():
            assert seen
            assert all(client._pool.get().is_closed for client in seen)
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


LOAD_THE_PLUGINS = """
import sys
from importlib.metadata import entry_points
ours = [ep for ep in entry_points(group="pytest11") if ep.value.startswith("silvia_client")]
assert sorted(ep.value for ep in ours) == [
    "silvia_client.qa.pytest_plugin", "silvia_client.testing.pytest_plugin"
], ours
for ep in ours:
    ep.load()
modules = {m for m in sys.modules if m.split(".")[0] == "silvia_client"}
# The plugins and their packages, which load their names on first use; the root's error
# tree, which imports nothing.
assert modules == {
    "silvia_client", "silvia_client._lazy", "silvia_client.errors", "silvia_client.qa",
    "silvia_client.qa.pytest_plugin", "silvia_client.testing",
    "silvia_client.testing.pytest_plugin",
}, modules
assert "pydantic" not in sys.modules
assert "httpx" not in sys.modules
"""


def test_loading_the_plugins_imports_a_few_small_modules_and_no_pydantic() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LOAD_THE_PLUGINS], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr


XDIST_SUITE = """
import os
from pathlib import Path

import pytest

from silvia_client.testing import Say, Scenario

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "none")
SEEN = Path(__file__).parent / "seen"


def _greeting(server, n):
    server.register(Scenario("greet", "A greeting.", script=(Say(f"Hi {n} from {WORKER}."),)))
    return f"Hi {n} from {WORKER}."


@pytest.mark.parametrize("n", range(3))
def test_silvia(silvia_server, silvia, n):
    assert len(silvia_server.sessions) == 0
    expected = _greeting(silvia_server, n)
    with silvia.chat.stream("/scenario greet") as stream:
        assert stream.until_done().text == expected
    assert len(silvia_server.sessions) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("n", range(3))
async def test_async_silvia(silvia_server, async_silvia, n):
    assert len(silvia_server.sessions) == 0
    expected = _greeting(silvia_server, n)
    async with async_silvia.chat.stream("/scenario greet") as stream:
        assert (await stream.until_done()).text == expected


@pytest.mark.parametrize("n", range(3))
def test_loopback(silvia_server, silvia_loopback_client, silvia_loopback_url, n):
    expected = _greeting(silvia_server, n)
    with silvia_loopback_client.chat.stream("/scenario greet") as stream:
        assert stream.until_done().text == expected
    assert len(silvia_server.sessions) == 1  # the URL is this test's own server
    with SEEN.open("a") as seen:
        seen.write(f"{WORKER} {silvia_loopback_url}\\n")


def test_qa(silvia_qa):
    assert silvia_qa.observe("How are my accounts?", scenario="accounts").turn.complete
"""


@pytest.mark.xdist
def test_the_fixtures_work_under_xdist_with_a_server_per_worker(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=XDIST_SUITE)
    # Hypothesis's plugin, unused here, is most of each worker's start-up time.
    quick = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result = pytester.runpytest_subprocess("-n", "2", *quick, "-v")
    # 13: the async tests run on asyncio and on trio (anyio's plugin, trio in the test extra).
    result.assert_outcomes(passed=13)
    workers = {line.split()[0] for line in (pytester.path / "seen").read_text().splitlines()}
    assert workers <= {"gw0", "gw1"}
    ran_on = {w for w in ("[gw0]", "[gw1]") if any(w in line for line in result.outlines)}
    assert ran_on == {"[gw0]", "[gw1]"}, "both workers ran tests"
