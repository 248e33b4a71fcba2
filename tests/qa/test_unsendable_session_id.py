"""A session id the URL cannot carry, sent by a server (issue 20, finding 10): `sessions.get`
refuses it with a `ConfigurationError` naming the limit (never `httpx.InvalidURL`), and
`silvia qa run` turns it into a finding and writes its reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from silvia_client import SilviaClient
from silvia_client.cli import main
from silvia_client.errors import ConfigurationError

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head

LONG_ID = "s" * 70_000


def respond(request: Request, connection: Connection) -> None:
    if request.method == "POST":
        body = event("session", {"sessionId": LONG_ID}) + event("text", {"text": "Hi"})
        body += event("done", {})
        connection.send(head(200, SSE, chunked=True) + chunk(body) + chunk(b""))
    else:  # never reached: the client refuses the URL first
        connection.send(head(500, {"content-length": "0"}))


def test_the_client_refuses_the_id_naming_the_limit() -> None:
    with HostileServer(respond) as server:
        with SilviaClient(base_url=server.url, token="t") as client:
            turn = client.chat.send("hi")
            assert turn.session_id == LONG_ID
            with pytest.raises(ConfigurationError, match="65,536"):
                client.sessions.get(LONG_ID)
        assert [r.method for r in server.requests] == ["POST"]


def test_qa_run_turns_it_into_a_finding_and_writes_its_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", "t")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"prompts": [{"id": "long-id", "message": "hi"}]}))
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    with HostileServer(respond) as server:
        argv = ["qa", "run", str(script), "--base-url", server.url]
        status = main([*argv, "--junit", str(junit), "--json", str(report)])
    out = capsys.readouterr()
    assert status in (0, 1), out.err  # findings, never an internal error (4) or a crash
    assert "Traceback" not in out.err
    ET.parse(junit)  # well-formed
    document = json.loads(report.read_text())
    (finding,) = document["prompts"][0]["findings"]
    assert finding["rule"] == "reload-agrees"
    assert "ConfigurationError" in finding["message"]
