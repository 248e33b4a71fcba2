"""`client.sessions.get`: history with the same typed citations as a live turn; the request
(the id as a path segment, the call's options); bodies that are no session."""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
from decimal import Decimal
from functools import partial
from typing import Any

import httpx
import pytest
import respx
from pydantic import TypeAdapter

from silvia_client import DEFAULT_WIRE
from silvia_client._sse import FAST_PATH
from silvia_client.chat import CitationEvent, MessageEvent, TextEvent
from silvia_client.citations import AccountRef, AccountsTarget, Citation, InlineCitation, WebTarget
from silvia_client.errors import ConfigurationError, UnexpectedResponseError
from silvia_client.sessions import (
    Message,
    Session,
    _history,
    parse_session,
    read_session,
    session_path,
)

from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_SOURCE,
    CHAT_URL,
    WEB_URL,
    Body,
    account,
    accounts,
    assistant,
    body,
    done,
    event,
    json_response,
    row,
    sse_response,
    user,
    web,
)

pytestmark = pytest.mark.anyio
PATH = "/api/chat/sessions/sess_1"


async def get(api: Api, server: respx.MockRouter, payload: object) -> Session:
    server.get(PATH).mock(return_value=json_response(payload))
    return await api.session(api.client(), "sess_1")


def plain_way(data: bytes) -> Any:
    raise AssertionError("read the plain way")


async def test_messages_typed_citations_and_the_fields_the_sdk_does_not_model(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = body(
        user(),
        assistant(
            model="claude-x",
            feedback={"score": 1},
            citations=[
                row(ACCOUNT_SOURCE, accounts((ACCOUNT_A, "plaid"), (ACCOUNT_B, None))),
                row(WEB_URL, web(), type="search_result_location", search_result_index=0),
            ],
            inline_citations=[row(WEB_URL, web(), start=0, end=9)],
        ),
        created_at="2025-01-01",
        archived=False,
    )
    if FAST_PATH:  # an ordinary body is read the fast way (unless this pydantic-core misreads)
        monkeypatch.setattr(_history, "loads", plain_way)
    fetched = await get(api, server, payload)
    monkeypatch.undo()
    # Read the fast way (`get`) and the plain way: the session object's id, not the one asked.
    for session in (fetched, parse_session(payload, "sess_0")):
        assert (session.id, session.title) == ("sess_1", "Checking")
        assert dict(session.extra) == {"created_at": "2025-01-01", "archived": False}
        first, second = session.messages
        assert (first.id, first.role, first.text, first.created_at) == (
            "m1",
            "user",
            "How much is in checking?",
            "2025-01-01T00:00:00Z",
        )
        assert (first.citations, first.inline_citations) == ((), ())
        assert second.text == "You have $120."
        assert dict(second.extra) == {"model": "claude-x", "feedback": {"score": 1}}
        assert all(type(c) is Citation for c in second.citations)
        assert [c.target for c in second.citations] == [
            AccountsTarget((AccountRef(ACCOUNT_A, "plaid"), AccountRef(ACCOUNT_B, None))),
            WebTarget(WEB_URL),
        ]
        extra = {"type": "search_result_location", "search_result_index": 0}
        assert second.citations[1].model_extra == extra
        assert second.citations[1].model_dump()["search_result_index"] == 0  # out as it came in
        (inline,) = second.inline_citations
        assert isinstance(inline, InlineCitation)
        assert inline.target == WebTarget(WEB_URL)
        assert inline.model_extra == {"start": 0, "end": 9}
        assert second.citation_errors == ()
    # pydantic (FastAPI's `-> Message`) dumps a message as its session's document holds it.
    document = json.loads(fetched.to_json())["messages"][1]
    assert TypeAdapter(Message).dump_python(fetched.messages[1]) == document


HUGE = "9" * 5000  # valid JSON, past the interpreter's digit limit: `int(HUGE)` raises


async def test_a_number_of_any_size_keeps_its_row_and_exact_value_live_and_on_reload(
    api: Api, server: respx.MockRouter
) -> None:
    # Issue 28, finding 9: an integer past the digit limit, or a number past a float's
    # range (pydantic's parser reads 1e400 as infinity), is kept as its exact Decimal,
    # and `to_json()` writes its digits (as a string: pydantic's JSON form of a Decimal).
    sent = [
        ("session", '{"sessionId": "s1"}'),
        ("text", '{"text": "Rates", "n": HUGE}'),
        ("citation", '{"citation": {"source": "a", "n": HUGE, "far": 1e400}}'),
        ("message", '{"id": "m", "n": -HUGE}'),
    ]
    events = [event(name, data.replace("HUGE", HUGE)) for name, data in sent]
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(Body([*events, done()])))
    async with api.stream(api.client()) as stream:
        got = await stream.events()
        turn = await stream.until_done()
    assert [type(event) for event in got[1:4]] == [TextEvent, CitationEvent, MessageEvent]
    assert isinstance(got[2], CitationEvent)
    assert got[2].citation.model_extra == {"n": Decimal(HUGE), "far": Decimal("1e400")}
    assert isinstance(got[3], MessageEvent)
    assert got[3].message["n"] == Decimal("-" + HUGE)
    assert turn.text == "Rates"
    inline = json.loads(turn.to_json())["inline_citations"][0]
    assert (inline["n"], inline["far"]) == (HUGE, "1E+400")
    # On reload, wherever it is kept, one at a time (each sends the body the plain way).
    for number in ("1e400", HUGE):
        for payload in [
            '{"session": {"x": N}, "messages": []}',
            '{"messages": [{"x": N}]}',
            '{"messages": [{"citations": [{"source": "s", "x": N}]}]}',
        ]:
            content = payload.replace("N", number).encode()
            server.get(PATH).mock(return_value=httpx.Response(200, content=content))
            loaded = await api.session(api.client(), "sess_1")
            kept = [loaded.extra, *(m.extra for m in loaded.messages)]
            kept += [c.model_extra or {} for m in loaded.messages for c in m.citations]
            assert [value for each in kept for value in each.values()] == [Decimal(number)]
        assert str(Decimal(number)) in loaded.to_json()  # the row's digits, exactly


async def test_what_is_not_a_row_or_a_message_is_skipped_reported_and_logged_per_list(
    api: Api, server: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    # A warning per list, and the collector on when a handler (the caller's code) runs:
    # the SDK never pauses it.
    seen: list[tuple[str, bool]] = []

    def note(record: logging.LogRecord) -> bool:
        seen.append((record.getMessage(), gc.isenabled()))
        return True

    caplog.handler.addFilter(note)
    bad_rows = assistant(
        citations=[
            row(WEB_URL, web()),
            {"title": "no source", "target": account(ACCOUNT_A, "snaptrade")},
            "not a row",
            row(ACCOUNT_SOURCE, account(ACCOUNT_A)),
        ],
        inline_citations=[{"source": 5}],
    )
    payload = {"messages": [user(), "junk", bad_rows, None]}
    session = await get(api, server, payload)
    parse_session(payload, "sess_1")  # fetched, parsed, read: the same warnings each time
    read_session(json.dumps(payload).encode(), "sess_1")
    logged = [("skipped 2 malformed citation row(s)", True)]
    assert seen == [*logged, ("skipped 1 malformed citation row(s)", True)] * 3
    assert [m.id for m in session.messages] == ["m1", "m2"]  # the session did not fail
    assert [(e.index, e.reason, e.raw) for e in session.message_errors] == [
        (1, "expected an object, got str", "junk"),
        (3, "expected an object, got NoneType", None),
    ]
    assert session.id == "sess_1"  # no `session` object: the id asked for
    assert session.title is None
    msg = session.messages[1]
    assert [c.source for c in msg.citations] == [WEB_URL, ACCOUNT_SOURCE]
    assert msg.inline_citations == ()
    # Each list reports its own rows.
    assert [e.index for e in msg.citation_errors] == [1, 2]
    assert [e.index for e in msg.inline_citation_errors] == [0]
    assert all(e.reason for e in (*msg.citation_errors, *msg.inline_citation_errors))
    # A list that is not a list is one error of its own list.
    session = await get(api, server, body(assistant(citations={"0": row(WEB_URL)})))
    (msg,) = session.messages
    assert (msg.citations, len(msg.citation_errors), msg.inline_citation_errors) == ((), 1, ())
    session = await get(api, server, body(assistant(inline_citations="rows")))
    (msg,) = session.messages
    assert (msg.citation_errors, len(msg.inline_citation_errors)) == ((), 1)


async def test_the_session_object_as_the_wire_names_it_names_the_session(
    api: Api, server: respx.MockRouter
) -> None:
    named = await get(api, server, body(id="sess_canonical"))
    assert (named.id, named.title) == ("sess_canonical", "Checking")
    # Fields that are not text are not taken: the id asked for, and no title.
    odd = await get(api, server, body(id=7, title=["T"]))
    assert (odd.id, odd.title) == ("sess_1", None)
    assert odd.extra == {}
    for bare in ({"messages": [user()]}, {"session": 5, "messages": [user()]}):
        assert (await get(api, server, bare)).id == "sess_1"
    assert parse_session({"messages": []}, "sess_9").id == "sess_9"
    assert parse_session({"session": {"id": ""}, "messages": []}, "sess_9").id == "sess_9"
    # As the client's wire format names the session object and the messages.
    wire = dataclasses.replace(DEFAULT_WIRE, session_key="chat", messages_key="turns")
    for turns in ([user()], [user(), "junk"]):  # the fast way, and the plain way
        payload = {"chat": {"id": "sess_1", "title": "Renamed"}, "turns": turns}
        server.get(PATH).mock(return_value=json_response(payload))
        session = await api.session(api.client(wire=wire), "sess_1")
        assert (session.title, [m.id for m in session.messages]) == ("Renamed", ["m1"])


async def test_a_message_repr_previews_its_text_and_shows_no_target(
    api: Api, server: respx.MockRouter
) -> None:
    text = "You have $4,210.55 in checking and $1,599.49 owed across your two credit cards."
    rows = [row(ACCOUNT_SOURCE, account(ACCOUNT_A, "plaid"))]
    session = await get(
        api, server, body(assistant(content=text, citations=rows, inline_citations=rows))
    )
    (msg,) = session.messages
    assert repr(msg) == (
        "Message(id='m2', role='assistant', created_at='2025-01-01T00:00:05Z', "
        f"text={text[:60] + '…'!r}, citations=1, inline_citations=1)"
    )
    assert repr(msg) in repr(session)
    for hidden in (ACCOUNT_A, "plaid", "target", "Target"):
        assert hidden not in repr(session)
    short = await get(api, server, body(user("Hi")))
    assert "text='Hi'" in repr(short.messages[0])


# ------------------------------------------------------------------------------------ the request


async def test_the_id_is_one_escaped_path_segment_or_refused(
    api: Api, server: respx.MockRouter
) -> None:
    route = server.get(url__regex=r".*").mock(return_value=json_response(body()))
    for sid, path in [
        ("a/b c?d#e%f", b"/api/chat/sessions/a%2Fb%20c%3Fd%23e%25f"),
        ("..a.b..", b"/api/chat/sessions/..a.b.."),  # dots inside an id are kept
    ]:
        await api.session(api.client(), sid)
        assert route.calls.last.request.method == "GET"
        assert route.calls.last.request.url.raw_path == path, sid
    # "." and ".." would be resolved by the URL parser: ".." would GET /api/chat. (Ids of
    # other types, and the empty one: test_config.py.)
    refused: list[tuple[Any, type[Exception], str]] = [
        (".", ConfigurationError, "session_id '.' cannot be a path segment"),
        ("..", ConfigurationError, "session_id '..' cannot be a path segment"),
        ("a\ud800", ConfigurationError, "session_id cannot be encoded as UTF-8 (it holds a lone"),
        (None, TypeError, "session_id must be a str, not NoneType"),
    ]
    for sid, error, message in refused:
        for method in ("get", "get_raw"):
            with pytest.raises(error) as caught:
                await api.call(getattr(api.client().sessions, method), sid)
            assert str(caught.value).startswith(message), (sid, method)
    assert route.call_count == 2
    # `sessions.get` refuses the empty and the unencodable id first; the path does too.
    for sid, message in [
        ("", "session_id must not be empty"),
        ("..", "session_id '..' cannot be a path segment"),
        ("a\udc80", "session_id cannot be encoded as UTF-8"),
    ]:
        with pytest.raises(ConfigurationError) as caught:
            session_path(sid, DEFAULT_WIRE)
        assert str(caught.value) == message


async def test_a_body_that_is_no_session_is_an_unexpected_response(
    api: Api, server: respx.MockRouter
) -> None:
    not_a_session = "expected a session as JSON, got 200 application/json: "
    bodies = [b"<html>oops</html>", b'{"session": {"id": "sess_1"}', b"\xff\xfe not utf-8", b"[]"]
    bodies += [b'"a string"', b'{"session": {"id": "sess_1"}}', b'{"messages": {"0": {}}}']
    cases = [(content, "identity", not_a_session) for content in bodies]
    cases += [(b"[" * 100_000 + b"]" * 100_000, "identity", not_a_session)]
    for content, encoding, said in [*cases, (b"not gzip at all", "gzip", "gzip")]:
        headers = {"content-type": "application/json", "x-request-id": "r"}
        headers["content-encoding"] = encoding
        route = server.get(PATH).mock(
            side_effect=lambda r, content=content, headers=headers: httpx.Response(
                200, stream=Body(content), headers=headers
            )
        )
        with pytest.raises(UnexpectedResponseError) as info:
            await api.session(api.client(), "sess_1")
        assert info.value.status_code == 200, content[:20]
        assert info.value.request_id == "r", content[:20]
        assert said in str(info.value), str(info.value)
        assert str(info.value).startswith(not_a_session) is (said == not_a_session)
        assert route.call_count == 1  # not retried
        route.reset()
    # Why, as `parse_session` says it.
    for payload, reason in [
        ([], "the body is not a JSON object"),
        ("a string", "the body is not a JSON object"),
        ({"session": {"id": "s"}}, "the body has no 'messages' list"),
        ({"messages": {"0": {}}}, "the body has no 'messages' list"),
    ]:
        with pytest.raises(ValueError, match=f"^{reason}$"):
            parse_session(payload, "s1")


async def test_each_option_of_a_call_reaches_its_request_and_get_raw_is_the_body_as_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = server.get(PATH).mock(return_value=json_response(body(user())))
    for method in ("get", "get_raw"):
        fetch = partial(api.call, getattr(api.client(timeout=30.0).sessions, method), "sess_1")
        await fetch(extra_headers={"x-trace": "t1"}, extra_query={"q": 2})
        assert route.calls.last.request.headers["x-trace"] == "t1"
        assert route.calls.last.request.url.params["q"] == "2"
        await fetch(timeout=7.0)
        assert set(route.calls.last.request.extensions["timeout"].values()) == {7.0}
        await fetch(deadline=3.0)  # cuts every timeout of the call
        assert all(0 < t <= 3.0 for t in route.calls.last.request.extensions["timeout"].values())
        await fetch()
        assert route.calls.last.request.extensions["timeout"]["read"] == 30.0  # one call's options
    # `get_raw` is the body as sent, retried as `get` is.
    sent = json.dumps(body(user()), indent=1).encode()
    route.mock(side_effect=[httpx.Response(503), httpx.Response(200, content=sent)])
    route.reset()
    assert await api.call(api.client(retry_backoff=0).sessions.get_raw, "sess_1") == sent
    assert route.call_count == 2
