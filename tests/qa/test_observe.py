"""The observer: raw events beside the SDK's reading, the reload, and how a turn fails."""

from __future__ import annotations

import json
import socket
from decimal import Decimal

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.chat import CitationEvent, DoneEvent, SessionEvent
from silvia_client.qa import Observer, check, observation_from_turn, observe, reload_session
from silvia_client.qa.observe import NOT_JSON
from silvia_client.testing import IN_PROCESS_URL, SCENARIO_HEADER, ReferenceServer


def test_each_event_is_recorded_raw_beside_its_typed_reading() -> None:
    server = ReferenceServer()
    with Observer.reference(server=server) as qa:
        observation = qa.observe("How are my accounts?", scenario="broken-target-parses")
    expected = server.expected_turn("broken-target-parses")
    assert observation.complete
    assert observation.failure is None
    assert isinstance(observation.events[0].event, SessionEvent)
    assert isinstance(observation.events[-1].event, DoneEvent)
    citations = [sent for sent in observation.events if sent.name == "citation"]
    # The raw target the server sent, which the SDK's reading no longer holds.
    raw_targets = [sent.value["citation"].get("target") for sent in citations]
    assert raw_targets == [c.get("target") for c in expected.inline_citations]
    assert raw_targets[0] == {"kind": "account", "accountId": 4210, "provider": "plaid"}
    first = citations[0].event
    assert isinstance(first, CitationEvent)
    assert first.citation.target is None
    for sent in observation.events:
        assert sent.value == json.loads(sent.data)


def test_the_turn_is_the_one_a_chat_stream_builds() -> None:
    server = ReferenceServer()
    with Observer.reference(server=server) as qa:
        observed = qa.observe("How are my cards?", scenario="pooling").turn
    http = httpx.Client(transport=server.transport())
    with (
        SilviaClient(
            base_url=IN_PROCESS_URL,
            token="t",
            http_client=http,
            default_headers={SCENARIO_HEADER: "pooling"},
        ) as client,
        client.chat.stream("How are my cards?") as stream,
    ):
        streamed = stream.until_done()
    http.close()
    assert observed.text == streamed.text
    assert observed.citations == streamed.citations
    assert [c.model_dump() for c in observed.inline_citations] == [
        c.model_dump() for c in streamed.inline_citations
    ]
    assert observed.complete
    assert streamed.complete


def test_a_complete_turn_is_reloaded_raw_and_typed() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("How are my accounts?", scenario="demo")
        unloaded = qa.observe("How are my accounts?", scenario="demo", reload=False)
    reload = observation.reload
    assert reload is not None
    assert reload.error is None
    assert reload.session is not None
    assert reload.body["session"]["id"] == observation.session_id
    assert reload.session.messages[-1].citations
    assert unloaded.reload is None


def test_a_continued_session_is_judged_by_its_last_turn() -> None:
    with Observer.reference() as qa:
        first = qa.observe("How are my accounts?", scenario="demo")
        second = qa.observe("And Apple?", scenario="market-data", session_id=first.session_id)
    assert second.session_id == first.session_id
    assert second.reload is not None
    assert len(second.reload.body["messages"]) == 4
    assert check(second).findings == ()


def test_how_a_turn_stops_short_is_recorded() -> None:
    stopped = {
        "fault-drop": "the connection dropped mid-stream (RemoteProtocolError)",
        "fault-error-event": "the server reported an error (overloaded_error); the turn stopped",
        "fault-no-done": "the stream ended without `done`",
        "status-500": "the chat request failed: HTTP 500 (api_error): Internal server error.",
        "fault-stall": "the stream stalled: no data for 0.05 s",
    }
    with Observer.reference(timeout=0.05) as qa:
        for scenario, failure in stopped.items():
            observation = qa.observe("hi", scenario=scenario)
            assert observation.failure == failure, scenario
            assert not observation.complete, scenario
            assert observation.reload is None, scenario  # an incomplete turn is not reloaded
            (finding,) = check(observation).findings
            assert (finding.rule, finding.message) == ("stream-complete", failure), scenario


def test_a_server_that_is_not_there() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Observer.connect(f"http://127.0.0.1:{port}", token="t", timeout=5.0) as qa:
        observation = qa.observe("hi")
    assert observation.failure == "the chat request failed: could not connect (ConnectError)"
    assert observation.events == ()


def test_an_answer_that_is_not_an_event_stream() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"answer": "hi"})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with SilviaClient(base_url="http://silvia.test", token="t", http_client=http) as client:
        observation = observe(client, "hi")
    assert observation.failure == (
        "the chat request answered 200 application/json, not text/event-stream"
    )


def test_data_that_is_not_json_is_kept_as_sent() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("hi", scenario="fault-malformed-json")
    (bad,) = [sent for sent in observation.events if sent.value is NOT_JSON]
    assert bad.name == "citation"
    assert bad.data.startswith('{"citation"')


def test_a_reload_that_fails_is_recorded() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("hi", scenario="demo", reload=False)
    # Reloaded from another server, which never saw the session.
    with Observer.reference() as other:
        missing = reload_session(other.client, observation)
    assert missing.reload is not None
    said = "Session not found."  # the server's own words
    assert missing.reload.error == f"the reload failed: HTTP 404 (not_found_error): {said}"
    assert check(missing).broken_rules == {"reload-agrees"}


def test_a_turn_can_be_checked_without_the_raw_events() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("hi", scenario="broken-target-fits-source")
        good = qa.observe("hi", scenario="demo")
    assert good.reload is not None
    session = good.reload.session
    result = check(good.turn, session=session)
    assert result.findings == ()
    skipped = {o.rule.id for o in result.outcomes if o.status == "skip"}
    assert skipped == {"target-parses", "one-meaning-per-source", "event-order"}
    assert check(observation.turn).broken_rules == {"target-fits-source"}
    rebuilt = observation_from_turn(observation.turn)
    assert not rebuilt.raw
    assert rebuilt.complete


def test_an_observation_rebuilt_from_a_turn_keeps_every_provider_as_sent() -> None:
    # QA checks the rows the server sent, vendors included: its rebuilt rows ask for them.
    with Observer.reference() as qa:
        observed = qa.observe("How are my cards?", scenario="pooling")
    assert observed.reload is not None
    rebuilt = observation_from_turn(observed.turn, session=observed.reload.session)
    rows = [sent.value["citation"] for sent in rebuilt.events if sent.name == "citation"]
    targets = [c.target for c in observed.turn.inline_citations]
    assert [row.get("target") for row in rows] == [t and t.to_wire() for t in targets]
    assert rebuilt.reload is not None
    reloaded = [row for m in rebuilt.reload.body["messages"] for row in m["citations"]]
    assert '"provider": "plaid"' in json.dumps([rows, reloaded])


def test_an_incomplete_turn_checked_without_the_raw_events() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("hi", scenario="fault-error-event")
    assert check(observation.turn).broken_rules == {"stream-complete"}


@pytest.mark.parametrize(
    ("respond", "failure"),
    [
        (
            lambda r: httpx.Response(401, json={"error": "no"}, headers={"x-request-id": "req_q"}),
            "the chat request failed: HTTP 401: no",  # the server's words
        ),
        (
            lambda r: httpx.Response(
                200,
                content=b'event: session\ndata: {"sessionId": "s1"}\n\n',
                headers={"content-type": "text/event-stream", "x-request-id": "req_q"},
            ),
            "the stream ended without `done`",
        ),
        (
            lambda r: httpx.Response(200, text="<p>", headers={"x-request-id": "req_q"}),
            "the chat request answered 200 text/plain; charset=utf-8, not text/event-stream",
        ),
    ],
    ids=["401", "no-done", "not-a-stream"],
)
def test_a_failed_request_keeps_the_request_id_the_server_sent(
    respond: object, failure: str
) -> None:
    http = httpx.Client(transport=httpx.MockTransport(respond))  # type: ignore[arg-type]
    with SilviaClient(base_url="http://silvia.test", token="t", http_client=http) as client:
        observation = observe(client, "hi")
    assert observation.failure == failure
    assert observation.request_id == "req_q"
    (finding,) = check(observation).findings
    assert finding.evidence["request_id"] == "req_q"


def test_a_huge_number_is_read_as_the_sdk_reads_it_not_as_data_that_is_not_json() -> None:
    huge = "9" * 5_000  # past `int`'s 4,300 digits: the SDK keeps it as a Decimal
    body = (
        f'event: session\ndata: {{"sessionId": "s1", "n": {huge}}}\n\n'
        f'event: citation\ndata: {{"citation": {{"source": "s", "target": {huge}}}}}\n\n'
        "event: done\ndata: {}\n\n"
    )
    sse = {"content-type": "text/event-stream"}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=sse, text=body))
    with (
        httpx.Client(transport=transport) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
    ):
        observation = observe(client, "hi", reload=False)
    assert observation.events[0].value["n"] == Decimal(huge)
    (finding,) = check(observation).outcome("target-parses").findings
    assert finding.evidence["target"] == str(Decimal(huge)), "the evidence shows its digits"
