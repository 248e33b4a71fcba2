"""`extra_body=` and `extra_query=`: merged into what is sent, over `with_options`' defaults;
a field the SDK sets itself, or a value of no accepted type, refused before anything is sent."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import ConfigurationError

from .conftest import Api
from .sse import CHAT_URL, full_turn, json_response, sse_response

pytestmark = pytest.mark.anyio

SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


def _chat(server: respx.MockRouter) -> respx.Route:
    return server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(full_turn()))


async def test_body_and_query_are_merged_into_the_turn_as_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = _chat(server)
    client = api.client()
    await api.turn(
        client,
        "hello",
        session_id="s1",
        extra_body={"temperature": 0.2, "tags": ["a"]},
        extra_query={"beta": "yes", "n": 2},
    )
    await api.call(client.chat.send, "hi", extra_body={"x": None})
    first, second = (call.request for call in route.calls)
    assert json.loads(first.content) == {
        "temperature": 0.2,
        "tags": ["a"],
        "message": "hello",
        "sessionId": "s1",
    }
    assert dict(first.url.params) == {"beta": "yes", "n": "2"}
    assert json.loads(second.content) == {"x": None, "message": "hi"}
    assert not second.url.params


async def test_a_session_get_carries_the_query(api: Api, server: respx.MockRouter) -> None:
    route = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    client = api.client()
    await api.call(client.sessions.get, "s1", extra_query={"include": "all"})
    await api.call(client.sessions.get_raw, "s1", extra_query={"v": 1.5})
    assert [dict(call.request.url.params) for call in route.calls] == [
        {"include": "all"},
        {"v": "1.5"},
    ]


async def test_a_field_the_sdk_sets_is_refused_before_anything_is_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = _chat(server)
    client = api.client()
    for field in ("message", "sessionId"):
        with pytest.raises(ConfigurationError, match=f"extra_body must not set '{field}'"):
            await api.turn(client, extra_body={field: "mine"})
        with pytest.raises(ConfigurationError, match=field):
            client.with_options(extra_body={field: "mine"})
    assert not route.calls


async def test_with_options_defaults_are_merged_under_the_call_s_own(
    api: Api, server: respx.MockRouter
) -> None:
    route = _chat(server)
    client = api.client()
    copy = client.with_options(extra_body={"a": 1, "b": 1}, extra_query={"q": "c", "r": "c"})
    copy = copy.with_options(extra_body={"c": 1})  # added to the first copy's
    await api.turn(copy, extra_body={"b": 2}, extra_query={"r": "call"})
    await api.turn(client)  # the original keeps none
    sent, plain = (call.request for call in route.calls)
    assert json.loads(sent.content) == {"a": 1, "b": 2, "c": 1, "message": "hi"}
    assert dict(sent.url.params) == {"q": "c", "r": "call"}
    assert json.loads(plain.content) == {"message": "hi"}
    assert not plain.url.params
    sessions = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    await api.call(copy.sessions.get, "s1")
    assert dict(sessions.calls.last.request.url.params) == {"q": "c", "r": "c"}


async def test_bad_types_are_configuration_errors(api: Api, server: respx.MockRouter) -> None:
    route = _chat(server)
    client = api.client()
    for name, value in [
        ("extra_body", ["a"]),
        ("extra_body", {1: "a"}),
        ("extra_body", {"a": {1, 2}}),
        ("extra_body", {"a": float("nan")}),
        ("extra_query", {"a": True}),
        ("extra_query", {"a": None}),
        ("extra_query", {"a": ["x"]}),
        ("extra_query", "a=1"),
    ]:
        options: dict[str, Any] = {name: value}
        with pytest.raises(ConfigurationError, match=f"^{name}"):
            await api.turn(client, **options)
        with pytest.raises(ConfigurationError, match=f"^{name}"):
            client.with_options(**options)
        if name == "extra_query":
            with pytest.raises(ConfigurationError, match=f"^{name}"):
                await api.call(client.sessions.get, "s1", **options)
    assert not route.calls


def test_a_get_has_no_extra_body() -> None:
    for cls in (SilviaClient, AsyncSilviaClient):
        client = cls(base_url="https://silvia.test")
        assert "extra_body" not in inspect.signature(client.sessions.get).parameters
        assert "extra_query" in inspect.signature(client.sessions.get_raw).parameters
