"""`client.sessions.get`: history with the same typed citations as a live turn."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import logging
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
import respx
from pydantic import TypeAdapter

from silvia_client import DEFAULT_WIRE
from silvia_client._sse import FAST_PATH
from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    Citation,
    InlineCitation,
    WebTarget,
    _final,
)
from silvia_client.sessions import Message, Session, _history, parse_session, read_session

from .conftest import Api
from .session_bodies import PATH, assistant, body, cite, user
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_SOURCE,
    WEB_URL,
    account,
    accounts,
    json_response,
    web,
)

pytestmark = pytest.mark.anyio


async def get(api: Api, server: respx.MockRouter, payload: object, sid: str = "sess_1") -> Session:
    server.get(PATH).mock(return_value=json_response(payload))
    return await api.session(api.client(), sid)


async def test_messages_and_typed_citations(api: Api, server: respx.MockRouter) -> None:
    session = await get(
        api,
        server,
        body(
            user(),
            assistant(
                citations=[
                    cite(ACCOUNT_SOURCE, accounts((ACCOUNT_A, "plaid"), (ACCOUNT_B, None))),
                    cite(WEB_URL, web()),
                ],
                inline_citations=[cite(WEB_URL, web(), start=0, end=9)],
            ),
        ),
    )
    assert session.id == "sess_1"
    assert session.title == "Checking"
    first, second = session.messages
    assert (first.id, first.role, first.text, first.created_at) == (
        "m1",
        "user",
        "How much is in checking?",
        "2025-01-01T00:00:00Z",
    )
    assert first.citations == ()
    assert first.inline_citations == ()
    assert second.text == "You have $120."
    assert all(type(c) is Citation for c in second.citations)
    assert [c.target for c in second.citations] == [
        AccountsTarget((AccountRef(ACCOUNT_A, "plaid"), AccountRef(ACCOUNT_B, None))),
        WebTarget(WEB_URL),
    ]
    (inline,) = second.inline_citations
    assert isinstance(inline, InlineCitation)
    assert inline.target == WebTarget(WEB_URL)
    assert inline.model_extra == {"start": 0, "end": 9}
    assert second.citation_errors == ()
    # pydantic (FastAPI's `-> Message`) dumps a message as its session's document holds it.
    document = json.loads(session.to_json())["messages"][1]
    assert TypeAdapter(Message).dump_python(second) == document


async def test_fields_the_sdk_does_not_model_are_kept(api: Api, server: respx.MockRouter) -> None:
    payload = body(
        assistant(
            model="claude-x",
            feedback={"score": 1},
            citations=[
                cite(
                    WEB_URL,
                    web(),
                    type="search_result_location",
                    search_result_index=0,
                    start_block_index=1,
                    end_block_index=2,
                )
            ],
        ),
        created_at="2025-01-01",
        archived=False,
    )
    # Read the fast way (`get`) and the plain way, which alone keeps the id asked for.
    for session in (await get(api, server, payload), parse_session(payload, "sess_0")):
        assert session.id == "sess_1"  # the session object's id
        assert dict(session.extra) == {"created_at": "2025-01-01", "archived": False}
        (msg,) = session.messages
        assert dict(msg.extra) == {"model": "claude-x", "feedback": {"score": 1}}
        assert msg.citations[0].model_extra == {
            "type": "search_result_location",
            "search_result_index": 0,
            "start_block_index": 1,
            "end_block_index": 2,
        }
        # And they go back out as they came in.
        assert msg.citations[0].model_dump()["search_result_index"] == 0


async def test_a_number_past_a_floats_range_is_kept_exactly(
    api: Api, server: respx.MockRouter
) -> None:
    # pydantic's parser reads 1e400 as infinity: wherever it is kept, the plain way reads it.
    for where, payload in [
        ("session", '{"session":{"x":1e400},"messages":[]}'),
        ("message", '{"messages":[{"x":1e400}]}'),
        ("row", '{"messages":[{"citations":[{"source":"s","x":1e400}]}]}'),
    ]:
        server.get(PATH).mock(return_value=httpx.Response(200, content=payload.encode()))
        session = await api.session(api.client(), "sess_1")
        kept = [session.extra, *(m.extra for m in session.messages)]
        kept += [c.model_extra or {} for m in session.messages for c in m.citations]
        assert [value for fields in kept for value in fields.values()] == [Decimal("1e400")], where


@pytest.mark.skipif(not FAST_PATH, reason="this pydantic-core misreads escapes: no fast path")
async def test_an_ordinary_body_takes_the_fast_path(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    def plain_way(data: bytes) -> Any:
        raise AssertionError("read the plain way")

    monkeypatch.setattr(_history, "loads", plain_way)
    session = await get(api, server, body(user(), assistant(citations=[cite(WEB_URL, web())])))
    assert [m.id for m in session.messages] == ["m1", "m2"]


async def test_a_malformed_row_is_skipped_and_reported(api: Api, server: respx.MockRouter) -> None:
    session = await get(
        api,
        server,
        body(
            user(),
            assistant(
                citations=[
                    cite(WEB_URL, web()),
                    {"title": "no source", "target": account(ACCOUNT_A, "snaptrade")},
                    "not a row",
                    cite(ACCOUNT_SOURCE, account(ACCOUNT_A)),
                ],
                inline_citations=[{"source": 5}],
            ),
        ),
    )
    assert len(session.messages) == 2  # the session did not fail
    msg = session.messages[1]
    assert [c.source for c in msg.citations] == [WEB_URL, ACCOUNT_SOURCE]
    assert msg.inline_citations == ()
    # Each list reports its own rows.
    assert [e.index for e in msg.citation_errors] == [1, 2]
    assert [e.index for e in msg.inline_citation_errors] == [0]
    assert all(e.reason for e in (*msg.citation_errors, *msg.inline_citation_errors))


class _GcAtEmit(logging.Handler):
    """Records each message with whether the collector was on when it was logged."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, bool]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), gc.isenabled()))


# Two bad rows and one in the first message, one in the second: a warning per list.
BAD_ROWS = body(
    assistant(citations=[cite(WEB_URL), None, 3], inline_citations=[{"source": 5}]),
    assistant(citations=["x"]),
)
BAD_ROWS_LOGGED = [
    ("skipped 2 malformed citation row(s)", True),
    ("skipped 1 malformed citation row(s)", True),
    ("skipped 1 malformed citation row(s)", True),
]


@contextlib.contextmanager
def gc_at_emit() -> Iterator[list[tuple[str, bool]]]:
    handler = _GcAtEmit()
    sdk_logger = logging.getLogger("silvia_client")
    sdk_logger.addHandler(handler)
    try:
        yield handler.seen
    finally:
        sdk_logger.removeHandler(handler)


# A warning per list, and the collector on when a handler (the caller's code) runs:
# the SDK never pauses it.
async def test_bad_rows_are_logged_per_list_with_the_collector_on(
    api: Api, server: respx.MockRouter
) -> None:
    with gc_at_emit() as fetched:
        await get(api, server, BAD_ROWS)
    with gc_at_emit() as parsed:
        parse_session(BAD_ROWS, "sess_1")
    with gc_at_emit() as read:
        read_session(json.dumps(BAD_ROWS).encode(), "sess_1")
    assert fetched == parsed == read == BAD_ROWS_LOGGED


async def test_a_citation_list_that_is_not_a_list(api: Api, server: respx.MockRouter) -> None:
    session = await get(api, server, body(assistant(citations={"0": cite(WEB_URL)})))
    (msg,) = session.messages
    assert msg.citations == ()
    assert len(msg.citation_errors) == 1
    assert msg.inline_citation_errors == ()
    session = await get(api, server, body(assistant(inline_citations="rows")))
    (msg,) = session.messages
    assert (msg.citation_errors, len(msg.inline_citation_errors)) == ((), 1)


async def test_message_rows_that_are_not_objects(api: Api, server: respx.MockRouter) -> None:
    session = await get(api, server, {"messages": [user(), "junk", None]})
    assert [m.id for m in session.messages] == ["m1"]
    assert [(e.index, e.reason, e.raw) for e in session.message_errors] == [
        (1, "expected an object, got str", "junk"),
        (2, "expected an object, got NoneType", None),
    ]
    assert session.id == "sess_1"  # no `session` object: the id asked for
    assert session.title is None


async def test_the_session_object_names_the_session(api: Api, server: respx.MockRouter) -> None:
    named = await get(api, server, body(id="sess_canonical"))
    assert (named.id, named.title) == ("sess_canonical", "Checking")
    # Fields that are not text are not taken: the id asked for, and no title.
    odd = await get(api, server, body(id=7, title=["T"]))
    assert (odd.id, odd.title) == ("sess_1", None)
    assert odd.extra == {}
    for payload in ({"messages": [user()]}, {"session": 5, "messages": [user()]}):
        assert (await get(api, server, payload)).id == "sess_1"
    assert parse_session({"messages": []}, "sess_9").id == "sess_9"
    assert parse_session({"session": {"id": ""}, "messages": []}, "sess_9").id == "sess_9"


def test_parse_session_says_why_a_body_is_not_a_session() -> None:
    for payload, reason in [
        ([], "the body is not a JSON object"),
        ("a string", "the body is not a JSON object"),
        ({"session": {"id": "s"}}, "the body has no 'messages' list"),
        ({"messages": {"0": {}}}, "the body has no 'messages' list"),
    ]:
        with pytest.raises(ValueError, match=f"^{reason}$"):
            parse_session(payload, "s1")


def test_the_final_word_is_read_off_the_rows_once_on_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    real = _final.final_targets

    def counted(streamed: Any, summary: Any) -> Any:
        reads.append(1)
        return real(streamed, summary)

    monkeypatch.setattr(_final, "final_targets", counted)
    (message,) = parse_session(body(assistant(citations=[cite(WEB_URL, web())])), "s1").messages
    assert reads == []  # not while reading
    assert message.target_for(WEB_URL) == WebTarget(WEB_URL)
    assert message.target_for("never cited") is None
    assert reads == [1]


async def test_the_clients_wire_format_reads_the_session(
    api: Api, server: respx.MockRouter
) -> None:
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
    rows = [cite(ACCOUNT_SOURCE, account(ACCOUNT_A, "plaid"))]
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
