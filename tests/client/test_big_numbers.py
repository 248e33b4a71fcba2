"""A valid JSON number of any length never loses a row (issue 28, finding 9).

An integer past the interpreter's digit limit (`sys.get_int_max_str_digits()`, 4,300
digits unless the program changed it) in a field the SDK does not model used to make
the live event a `MalformedEvent` and the whole reload an `UnexpectedResponseError`.
It is kept as a `decimal.Decimal` of the exact value, live and on reload, and
`to_json()` writes its exact digits (as a string: pydantic's JSON form of a Decimal).
"""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest
import respx

from silvia_client.chat import CitationEvent, MessageEvent, TextEvent

from .conftest import Api
from .sse import BASE_URL, CHAT_URL, Body, done, session, sse_response

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
HUGE = "9" * 5000  # valid JSON; `int(HUGE)` raises ValueError


def huge(template: str) -> str:
    return template.replace("HUGE", HUGE)


def raw(name: str, data: str) -> bytes:
    return f"event: {name}\ndata: {data}\n\n".encode()


async def test_a_huge_number_keeps_its_row_and_its_value_live_and_on_reload(
    api: Api, server: respx.MockRouter
) -> None:
    events = [
        session("s1"),
        raw("text", huge('{"text": "Rates", "n": HUGE}')),
        raw("citation", huge('{"citation": {"source": "a", "n": HUGE, "far": 1e400}}')),
        raw("message", huge('{"id": "m", "n": -HUGE}')),
        done(),
    ]
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(Body(events)))
    got, error = await api.read(api.client())
    assert error is None
    assert [type(event) for event in got[1:4]] == [TextEvent, CitationEvent, MessageEvent]
    citation = got[2]
    assert isinstance(citation, CitationEvent)
    assert citation.citation.model_extra == {"n": Decimal(HUGE), "far": Decimal("1e400")}
    message = got[3]
    assert isinstance(message, MessageEvent)
    assert message.message["n"] == Decimal("-" + HUGE)

    turn = await api.turn(api.client())
    assert turn.text == "Rates"
    assert [row.source for row in turn.inline_citations] == ["a"]
    row = json.loads(turn.to_json())["inline_citations"][0]
    assert (row["n"], row["far"]) == (HUGE, "1E+400")  # the exact digits
    # And on reload.
    body = huge(
        '{"session": {"id": "s1", "n": HUGE}, "messages": [{"id": "m", "role": "assistant", '
        '"content": "x", "n": HUGE, "citations": [{"source": "a", "n": HUGE}]}]}'
    )
    server.get(SESSION_URL).mock(return_value=httpx.Response(200, content=body.encode()))
    loaded = await api.session(api.client(), "s1")
    assert loaded.extra == {"n": Decimal(HUGE)}
    (reloaded,) = loaded.messages
    assert reloaded.extra == {"n": Decimal(HUGE)}
    assert [row.model_extra for row in reloaded.citations] == [{"n": Decimal(HUGE)}]
    assert reloaded.citation_errors == ()
    row = json.loads(loaded.to_json())["messages"][0]["citations"][0]
    assert row["n"] == HUGE
