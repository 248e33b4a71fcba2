"""`examples/relay_fastapi.py` under uvicorn on 127.0.0.1, before a reference server on loopback.

Run as a user runs it, on a socket the test hands over (`--fd`). No byte it sends its
client names a provider, though upstream cites them; a client that leaves mid-stream
closes the upstream stream.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from silvia_client.citations import AccountsTarget, AccountTarget, Citation
from silvia_client.testing import LoopbackServer, ReferenceServer

from ..citations.strategies import every_key

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKEN = "relay-s3cret-token"
PROVIDER_VALUE = re.compile(rb'"(plaid|manual|snaptrade)"', re.IGNORECASE)
VENDORS = re.compile(rb"plaid|snap\s?trade", re.IGNORECASE)
SCENARIOS = ("accounts", "pooling", "demo")  # turns citing accounts, with their providers
WAIT = 60.0  # generous: the bug it catches keeps a stream open for 300 s


class Upstream:
    """The reference server on loopback, and the log lines of the requests it finished."""

    def __init__(self) -> None:
        self.server = ReferenceServer(token=TOKEN)
        self.lines: list[str] = []
        self.finished = threading.Condition()
        self.loopback = LoopbackServer(self.server, log=self._log)

    def _log(self, line: str) -> None:
        with self.finished:
            self.lines.append(line)
            self.finished.notify_all()

    def wait_for(self, text: str, timeout: float) -> bool:
        with self.finished:
            return self.finished.wait_for(lambda: any(text in line for line in self.lines), timeout)


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    with up.loopback:
        yield up


@pytest.fixture(scope="module")
def relay(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILVIA_")}
    env.update(SILVIA_BASE_URL=upstream.loopback.url, SILVIA_TOKEN=TOKEN)
    command = [sys.executable, "-m", "uvicorn", "relay_fastapi:app", "--app-dir", str(EXAMPLES)]
    process = subprocess.Popen(
        [*command, "--fd", str(listener.fileno()), "--log-level", "warning"],
        cwd=tmp_path_factory.mktemp("cwd"),
        env=env,
        pass_fds=(listener.fileno(),),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    listener.close()  # the app holds it now
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=WAIT)
    try:
        deadline = time.monotonic() + WAIT
        while True:  # the socket accepts at once; the app answers once it has started
            try:
                if client.get("/openapi.json").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.communicate()[0].decode()
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.1)
        yield client
    finally:
        client.close()
        process.terminate()
        out, _ = process.communicate(timeout=WAIT)
        assert TOKEN.encode() not in out


def _private(body: bytes) -> None:
    """No vendor's name in the bytes, and no `provider` key at any depth of their JSON."""
    assert not VENDORS.search(body), VENDORS.search(body)
    assert not PROVIDER_VALUE.search(body)
    assert b"provider" not in body
    try:
        value = json.loads(body)
    except ValueError:
        return
    assert "provider" not in set(every_key(value))


def _account_targets(rows: list[Any]) -> list[AccountTarget | AccountsTarget]:
    targets = [Citation.model_validate(row).target for row in rows]
    return [t for t in targets if isinstance(t, (AccountTarget, AccountsTarget))]


def test_no_byte_the_relay_sends_names_a_provider(relay: httpx.Client, upstream: Upstream) -> None:
    for scenario in SCENARIOS:
        # What the relay reads upstream does carry the providers.
        upstream_turn = upstream.server.expected_turn(scenario)
        cited = [*upstream_turn.citations, *upstream_turn.inline_citations]
        assert '"provider": "plaid"' in json.dumps(cited), scenario

        ask = {"message": f"/scenario {scenario} How are my accounts?"}
        turn = relay.post("/chat", json=ask)
        assert turn.status_code == 200, turn.text
        document = turn.json()
        assert document["type"] == "turn"
        assert document["complete"] is True
        assert _account_targets(document["citations"])  # accounts, cited without a provider

        session_id = document["session_id"]
        session = relay.get(f"/sessions/{session_id}")
        assert session.status_code == 200, session.text
        assert session.json()["type"] == "session"
        rows = relay.get(f"/sessions/{session_id}/citations")
        assert rows.status_code == 200, rows.text
        assert rows.json() == [r for m in session.json()["messages"] for r in m["citations"]]
        accounts = _account_targets(rows.json())
        assert accounts
        for target in accounts:  # read back: the accounts, their provider unknown
            refs = target.accounts if isinstance(target, AccountsTarget) else (target.ref,)
            assert all(ref.provider is None for ref in refs)

        streamed = relay.post("/chat/stream", json=ask)
        assert streamed.status_code == 200
        assert streamed.text == document["text"]

        relayed = relay.post("/chat/events", json=ask)
        assert relayed.status_code == 200
        lines = [json.loads(line) for line in relayed.text.splitlines()]
        assert [line["type"] for line in lines][-1] == "done"
        assert "".join(line["text"] for line in lines if line["type"] == "text") == document["text"]
        assert _account_targets([line["citation"] for line in lines if line["type"] == "citation"])

        for response in (turn, session, rows, streamed, relay.get("/openapi.json")):
            _private(response.content)
            _private(repr(response.headers.raw).encode())
        for line in relayed.content.splitlines():
            _private(line)


def test_the_openapi_document_describes_the_citation_rows(relay: httpx.Client) -> None:
    schemas = relay.get("/openapi.json").json()["components"]["schemas"]
    assert {"source", "title", "cited_text", "target"} <= set(schemas["Citation"]["properties"])


def test_a_client_that_leaves_mid_stream_closes_the_upstream_stream(
    relay: httpx.Client, upstream: Upstream
) -> None:
    # `fault-stall` streams some text, then nothing for 300 s: its log line is written
    # when its answer ends, and it ends only if the relay closes the stream.
    finished = "scenario=fault-stall"
    ask = {"message": "/scenario fault-stall How are my accounts?"}
    with relay.stream("POST", "/chat/stream", json=ask) as response:
        assert response.status_code == 200
        chunks = response.iter_bytes()  # kept: a dropped iterator closes the connection
        assert next(chunks)
        assert not upstream.wait_for(finished, timeout=0.2)  # still streaming upstream
    started = time.monotonic()
    assert upstream.wait_for(finished, timeout=WAIT), upstream.lines
    assert time.monotonic() - started < WAIT
