"""Lone surrogates in a scenario: the server streams them as a JSON server does (`\\udXXX`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer, Say, Scenario
from silvia_client.testing._steps import json_bytes

from ..depth import examples

TEXT = "Half \ud800 of a pair, \udfff, \udc00\ud800 backwards, and a whole one: \U0001f600 é."
SCENARIO = Scenario("lone-surrogates", "Text holding lone surrogates.", script=(Say(TEXT),))
TOKEN = "test-token"

surrogates = st.integers(0xD800, 0xDFFF).map(chr)
any_text = st.text(
    alphabet=st.one_of(st.characters(exclude_categories=()), surrogates), max_size=20
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), any_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=12,
)


def as_javascript_reads(value: Any) -> Any:
    """`value` with each surrogate pair joined into its character, as UTF-16 strings hold it."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, list):
        return [as_javascript_reads(item) for item in value]
    if isinstance(value, dict):
        return {as_javascript_reads(k): as_javascript_reads(v) for k, v in value.items()}
    return value


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_any_value_encodes_to_utf8_json_that_reads_back(value: Any) -> None:
    data = json_bytes(value)
    assert json.loads(data.decode("utf-8", errors="strict")) == as_javascript_reads(value)
    try:
        plain = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return
    assert data == plain  # text without lone surrogates goes out exactly as before


def test_a_lone_surrogate_is_escaped_as_javascript_writes_it() -> None:
    # JSON.stringify("a\udc00b\ud83d\ude00é") in a well-formed-JSON engine (ES2019).
    assert json_bytes({"t": "a\udc00b\U0001f600é"}) == '{"t":"a\\udc00b😀é"}'.encode()
    assert json_bytes(["\ud800"]) == b'["\\ud800"]'


def _server() -> ReferenceServer:
    server = ReferenceServer()
    server.register(SCENARIO)
    return server


def _turn_and_reload(client: SilviaClient) -> tuple[str, str]:
    with client.chat.stream(f"/scenario {SCENARIO.name}") as stream:
        turn = stream.until_done()
    assert turn.complete
    assert turn.session_id is not None
    return turn.text, client.sessions.get(turn.session_id).messages[-1].text


async def _aturn_and_reload(client: AsyncSilviaClient) -> tuple[str, str]:
    async with client.chat.stream(f"/scenario {SCENARIO.name}") as stream:
        turn = await stream.until_done()
    assert turn.complete
    assert turn.session_id is not None
    return turn.text, (await client.sessions.get(turn.session_id)).messages[-1].text


def test_a_scenario_with_lone_surrogates_streams_over_loopback() -> None:
    with (
        _server().serve_loopback() as url,
        SilviaClient(base_url=url, token=TOKEN, max_retries=0) as client,
    ):
        assert _turn_and_reload(client) == (TEXT, TEXT)


def test_a_scenario_with_lone_surrogates_streams_in_process() -> None:
    server = _server()
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as client,
    ):
        assert _turn_and_reload(client) == (TEXT, TEXT)


@pytest.mark.anyio
async def test_a_scenario_with_lone_surrogates_streams_over_loopback_async() -> None:
    with _server().serve_loopback() as url:
        async with AsyncSilviaClient(base_url=url, token=TOKEN, max_retries=0) as client:
            assert await _aturn_and_reload(client) == (TEXT, TEXT)


@pytest.mark.anyio
async def test_a_scenario_with_lone_surrogates_streams_in_process_async() -> None:
    server = _server()
    async with (
        httpx.AsyncClient(transport=server.transport()) as http,
        AsyncSilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as client,
    ):
        assert await _aturn_and_reload(client) == (TEXT, TEXT)
