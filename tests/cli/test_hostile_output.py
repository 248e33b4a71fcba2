"""Every server-controlled field, with every hostile class at once, through every command.

One payload (`PAYLOAD`: an OSC title, a screen clear, a C1 CSI, DEL, NUL, bidi
overrides and isolates, a lone surrogate, U+FFFE/U+FFFF, a forged OSC 8 link) in
each field a server controls (text, a web result's title, quote and URL, the
session id, an unknown event, an error event, an HTTP error, the session's title;
in a recording the request id and a header), through `chat`, `session show`, `qa
run` and `qa check` in-process: no raw control (but newline and tab), bidi control
or lone surrogate reaches stdout, stderr or a report; JUnit and JSON parse.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from silvia_client._wire import WireFormat
from silvia_client.cli import main
from silvia_client.testing import (
    Cite,
    HttpError,
    ReferenceServer,
    Say,
    Scenario,
    SearchWeb,
    SendError,
    SendUnknown,
    WebResult,
)
from silvia_client.testing._steps import Event, Step
from silvia_client.testing._turn import PlayedTurn, TextDelta, WireCitation

from ._cli import session_of

TOKEN = "cli-hostile-output-token"
PAYLOAD = (
    "\x1b]0;pwned\x07\x1b[2J\x9b31m\x7f\x00\u202eevil\u202c\u2066x\u2069"
    "\ud800\ufffe\uffff\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
)
# What a user may send (it becomes the session's title): no lone surrogate, which
# the client refuses to encode.
SENT = PAYLOAD.replace("\ud800", "")
URL = "https://example.com/rates"
# What no terminal stream and no report may hold raw: C0 but \n and \t, DEL, C1, the
# line separators, lone surrogates, bidi controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


class _Everywhere:
    """The payload in each citation's source (streamed and stored), and the session id."""

    def __init__(self, session: bool) -> None:
        self.session = session

    def turn(self, turn: PlayedTurn) -> PlayedTurn:
        def fix(citation: WireCitation) -> WireCitation:
            return {**citation, "source": f"{citation.get('source')}#{PAYLOAD}"}

        stream = tuple(item if isinstance(item, TextDelta) else fix(item) for item in turn.stream)
        return replace(turn, stream=stream, summary=tuple(map(fix, turn.summary)))

    def steps(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        out: list[Step] = []
        for step in steps:
            if self.session and isinstance(step, Event) and step.name == wire.events.session:
                data = dict(step.data)  # type: ignore[call-overload]
                data[wire.session_id_key] = f"sess_{PAYLOAD}"
                step = replace(step, data=data)
            out.append(step)
        return out


_WEB = (
    SearchWeb(query=PAYLOAD, results=(WebResult(title=PAYLOAD, text=PAYLOAD, url=URL),)),
    Say(PAYLOAD),
    Cite(URL),
)
SCENARIOS = tuple(
    Scenario(name, f"The payload in {where}.", script=_WEB, **how)  # type: ignore[arg-type]
    for name, where, how in [
        ("hostile-text", "text, title, quote and source", {"rewrite": _Everywhere(session=False)}),
        ("hostile-session", "the session id", {"rewrite": _Everywhere(session=True)}),
        (
            "hostile-events",
            "an unknown event and an error event",
            {"fault": SendError(error_type=PAYLOAD, message=PAYLOAD, after_events=3)},
        ),
        (
            "hostile-unknown",
            "an unknown event's name and data",
            {
                "fault": SendUnknown(
                    event=f"x{PAYLOAD}".replace("\x00", ""), data={PAYLOAD: PAYLOAD}
                )
            },
        ),
        ("hostile-status", "an HTTP error", {"fault": HttpError(400, PAYLOAD, PAYLOAD)}),
    ]
)


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    server = ReferenceServer(token=TOKEN)
    for scenario in SCENARIOS:
        server.register(scenario)
    with server.serve_loopback() as url:
        yield url


def _clean(stream: str, where: str) -> None:
    found = RAW.findall(stream)
    assert not found, f"{where} holds raw {sorted(set(found))!r}"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    _clean(out, f"stdout of {argv[:2]}")
    _clean(err, f"stderr of {argv[:2]}")
    assert "internal error" not in err
    return status, out, err


def test_chat_then_session_show_write_no_raw_control(
    loopback: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for scenario in SCENARIOS[1:]:  # their lines are checked by `_run`; the first, below
        _run(["chat", f"/scenario {scenario.name} {SENT}", "--base-url", loopback], capsys)
    status, out, err = _run(
        ["chat", f"/scenario hostile-text {SENT}", "--base-url", loopback], capsys
    )
    assert status == 0
    assert "\\x1b]0;pwned\\x07" in out  # shown, escaped, not obeyed
    status, out, err = _run(["session", "show", session_of(err), "--base-url", loopback], capsys)
    assert status == 0
    assert "\\x1b[2J" in out


def _check_reports(junit: Path, report: Path, page: Path) -> None:
    for path in (junit, report, page):
        text = path.read_bytes().decode("utf-8")  # strict: no lone surrogate
        _clean(text, path.name)
    root = ET.parse(junit).getroot()
    assert root.iter("testcase")
    assert json.loads(report.read_text(encoding="utf-8"))["prompts"]
    assert "<html" in page.read_text(encoding="utf-8")


def test_qa_run_and_qa_check_write_no_raw_control(
    loopback: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = [
        {"id": s.name, "message": f"{SENT} hi", "scenario": s.name, "expect": {"complete": True}}
        for s in SCENARIOS
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"name": PAYLOAD, "prompts": prompts}), encoding="utf-8")
    junit, report, page = tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"
    recorded = tmp_path / "rec"
    argv = ["qa", "run", str(script), "--base-url", loopback, "--record", str(recorded)]
    status, out, _ = _run(
        [*argv, "--junit", str(junit), "--json", str(report), "--html", str(page)], capsys
    )
    assert status == 1
    assert "\\x1b" in out
    _check_reports(junit, report, page)

    # A recording holding the payload where only a recording can: the request id and
    # a header value (HTTP could not carry them), and the event names as recorded.
    files = sorted(recorded.glob("*.jsonl"))
    assert files
    edited = tmp_path / "edited.jsonl"
    lines = files[0].read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        item = json.loads(line)
        if item["type"] == "response":
            item["headers"] = [
                [name, PAYLOAD if name == "x-request-id" else value]
                for name, value in item["headers"]
            ] + [["x-hostile", PAYLOAD]]
            lines[index] = json.dumps(item)
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    junit, report, page = (tmp_path / "c.xml", tmp_path / "c.json", tmp_path / "c.html")
    reports = ["--junit", str(junit), "--json", str(report), "--html", str(page)]
    status, out, _ = _run(["qa", "check", *map(str, files), str(edited), *reports], capsys)
    assert status in (0, 1)
    _check_reports(junit, report, page)
