"""Every SSE event of a turn becomes one typed event; nothing is dropped, nothing is fatal."""

from __future__ import annotations

import pytest
import respx

from silvia_client.chat import (
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
)
from silvia_client.citations import AccountTarget, WebTarget
from silvia_client.errors import ServerStreamError

from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_SOURCE,
    CHAT_URL,
    FINAL_MESSAGE,
    WEB_URL,
    account,
    citation,
    comment,
    done,
    error,
    event,
    message,
    row,
    session,
    sse_response,
    summary,
    text,
    web,
)

pytestmark = pytest.mark.anyio


def serve(server: respx.MockRouter, *parts: bytes) -> respx.Route:
    body = b"".join(parts)
    return server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(body))


async def test_each_contract_event_becomes_its_typed_event(
    api: Api, server: respx.MockRouter
) -> None:
    serve(
        server,
        session("sess_9"),
        text("Hello"),
        citation(row(WEB_URL, web(), type="search_result_location", search_result_index=2)),
        summary([row(WEB_URL, web())]),
        message(FINAL_MESSAGE),
        done(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    assert [type(e) for e in events] == [
        SessionEvent,
        TextEvent,
        CitationEvent,
        CitationsSummaryEvent,
        MessageEvent,
        DoneEvent,
    ]
    session_event, text_event, cite, final, msg, _ = events
    assert isinstance(session_event, SessionEvent)
    assert session_event.session_id == "sess_9"
    assert isinstance(text_event, TextEvent)
    assert text_event.text == "Hello"
    assert isinstance(cite, CitationEvent)
    assert cite.citation.source == WEB_URL
    assert cite.citation.title == f"title of {WEB_URL}"
    assert cite.citation.target == WebTarget(WEB_URL)
    assert cite.citation.offset == len("Hello")
    assert cite.citation.model_extra == {
        "type": "search_result_location",
        "search_result_index": 2,
    }
    assert isinstance(final, CitationsSummaryEvent)
    assert [c.target for c in final.citations] == [WebTarget(WEB_URL)]
    assert final.errors == ()
    assert isinstance(msg, MessageEvent)
    assert msg.message == FINAL_MESSAGE
    assert [e.type for e in events] == [
        "session",
        "text",
        "citation",
        "citations_summary",
        "message",
        "done",
    ]


async def test_error_event_is_typed_before_the_stream_fails(
    api: Api, server: respx.MockRouter
) -> None:
    serve(server, text("a"), error("model overloaded", "overloaded_error"), done())
    events, failure = await api.read(api.client())
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].message == "model overloaded"
    assert events[-1].error_type == "overloaded_error"
    assert isinstance(failure, ServerStreamError)


async def test_error_event_with_a_plain_string(api: Api, server: respx.MockRouter) -> None:
    serve(server, event("error", {"error": "boom"}))
    events, failure = await api.read(api.client())
    assert isinstance(events[0], ErrorEvent)
    assert events[0].message == "boom"
    assert events[0].error_type is None
    assert isinstance(failure, ServerStreamError)
    assert failure.error_type is None


async def test_unknown_event_keeps_its_raw_name_and_data(
    api: Api, server: respx.MockRouter
) -> None:
    serve(
        server,
        text("a"),
        event("thinking_delta", '{"thinking": "hmm"}'),
        event("weird", "not json at all"),
        text("b"),
        done(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    unknown = [e for e in events if isinstance(e, UnknownEvent)]
    assert [(e.event, e.data) for e in unknown] == [
        ("thinking_delta", '{"thinking": "hmm"}'),
        ("weird", "not json at all"),
    ]
    turn = await api.turn(api.client())
    assert turn.complete
    assert turn.text == "ab"
    assert [(e.event, e.data) for e in turn.unknown_events] == [
        ("thinking_delta", '{"thinking": "hmm"}'),
        ("weird", "not json at all"),
    ]


# A known name whose data is not JSON, or not the documented shape.
MALFORMED = [
    ("session", "{not json"),
    ("session", '{"sessionId": 7}'),
    ("session", "[]"),
    ("text", '{"text": null}'),
    ("text", '"just a string"'),
    ("text", '{"delta": "x"}'),
    ("citation", '{"citation": "silvia://x"}'),
    ("citation", '{"citation": {"title": "no source"}}'),
    ("citation", '{"citation": {"source": 12}}'),
    ("citations_summary", '{"citations": {"0": {}}}'),
    ("citations_summary", "{"),
    ("message", "[1, 2]"),
    ("error", '{"error": 5}'),
    ("error", "{}"),
]


@pytest.mark.parametrize(("name", "data"), MALFORMED)
async def test_malformed_known_event_keeps_raw_data_and_the_stream_goes_on(
    api: Api, server: respx.MockRouter, name: str, data: str
) -> None:
    serve(server, text("before "), event(name, data), text("after"), done())
    events, failure = await api.read(api.client())
    assert failure is None
    assert [type(e) for e in events] == [TextEvent, MalformedEvent, TextEvent, DoneEvent]
    bad = events[1]
    assert isinstance(bad, MalformedEvent)
    assert bad.event == name
    assert bad.data == data
    assert bad.reason
    turn = await api.turn(api.client())
    assert turn.complete
    assert turn.text == "before after"
    assert [(m.event, m.data) for m in turn.malformed_events] == [(name, data)]


async def test_multiline_data_is_joined_before_decoding(api: Api, server: respx.MockRouter) -> None:
    serve(server, event("text", '{"text":\n"two lines"}'), done())
    events, _ = await api.read(api.client())
    assert events[0] == TextEvent("two lines")


async def test_keep_alive_comments_are_skipped(api: Api, server: respx.MockRouter) -> None:
    serve(
        server,
        comment(),
        session("s"),
        comment("ping"),
        comment("ping"),
        text("a"),
        b": ping\n",  # a comment line inside an event
        b'event: text\n: keep-alive\ndata: {"text": "b"}\n\n',
        comment(),
        done(),
        comment(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    assert events == [SessionEvent("s"), TextEvent("a"), TextEvent("b"), DoneEvent()]


async def test_done_with_empty_data(api: Api, server: respx.MockRouter) -> None:
    serve(server, text("a"), b"event: done\ndata:\n\n")
    turn = await api.turn(api.client())
    assert turn.complete


async def test_citation_target_is_parsed(api: Api, server: respx.MockRouter) -> None:
    serve(server, citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A, "plaid"))), done())
    events, _ = await api.read(api.client())
    assert isinstance(events[0], CitationEvent)
    assert events[0].citation.target == AccountTarget(ACCOUNT_A, "plaid")


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "web", "url": "javascript:alert(1)"},
        {"kind": "hologram"},
        {"kind": "market_data", "ticker": ""},
        {"kind": "accounts", "accounts": [{"accountId": ACCOUNT_A}, {"accountId": 5}]},
        "web",
        [1],
    ],
)
async def test_malformed_target_becomes_none_and_the_rest_is_kept(
    api: Api, server: respx.MockRouter, target: object
) -> None:
    wire = {"source": "https://x.test/a", "title": "T", "cited_text": "q", "target": target}
    wire["start_block_index"] = 3
    serve(server, citation(wire), summary([wire]), done())
    events, failure = await api.read(api.client())
    assert failure is None
    cite, final = events[0], events[1]
    assert isinstance(cite, CitationEvent)
    assert isinstance(final, CitationsSummaryEvent)
    for c in (cite.citation, final.citations[0]):
        assert c.target is None
        assert (c.source, c.title, c.cited_text) == ("https://x.test/a", "T", "q")
        assert c.model_extra == {"start_block_index": 3}


async def test_summary_with_a_bad_row_keeps_the_good_ones(
    api: Api, server: respx.MockRouter
) -> None:
    good = row(WEB_URL, web())
    serve(server, summary([good, {"title": "no source"}, "junk", good]), done())
    events, _ = await api.read(api.client())
    final = events[0]
    assert isinstance(final, CitationsSummaryEvent)
    assert [c.source for c in final.citations] == [WEB_URL, WEB_URL]
    assert [e.index for e in final.errors] == [1, 2]
    turn = await api.turn(api.client())
    assert [e.index for e in turn.citation_errors] == [1, 2]
    assert len(turn.citations) == 2
