"""The quick paths of the hot loops give exactly what the plain paths give.

Each optimisation made for the benchmarks (benchmarks/) has a plain
counterpart that defines its behaviour: `json.loads`, `model_validate`, the
event-stream algorithm as the spec words it, the readers of `EventDecoder`.
These tests hold the quick path to it on arbitrary input, so a behaviour
change cannot hide in a fast path.
"""

from __future__ import annotations

import asyncio
import codecs
import gc
import gzip
import json
import re
from contextlib import suppress
from itertools import pairwise
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient, SilviaClient
from silvia_client._gc import gc_paused
from silvia_client._sse import EventTooLarge, SSEFields, SSEParser, iter_sse_fields
from silvia_client.chat.events import (
    DoneEvent,
    MalformedEvent,
    TextEvent,
    UnknownEvent,
    decode_event,
    loads,
)
from silvia_client.citations import Citation, InlineCitation
from silvia_client.citations._rows import citation_from_json, load_json_citations

# --- JSON -------------------------------------------------------------------------

JSON_TEXTS = st.one_of(
    st.text(),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    ).map(json.dumps),
).flatmap(
    lambda text: st.sampled_from(
        [text, " " + text, text + " ", "\ufeff" + text, text + "x", text[:-1], "\n" + text]
    )
)


def _outcome(function: Any, text: str) -> tuple[str, object]:
    try:
        value = function(text)
    except Exception as error:
        return "raised", (type(error), str(error))
    return "value", json.dumps(value, sort_keys=True, allow_nan=True)


@given(JSON_TEXTS)
def test_loads_is_json_loads(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


# --- citation rows ----------------------------------------------------------------

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
TARGETS = st.one_of(
    SCALARS,
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["web", "account", "accounts", "portfolio", "market_data", "x"])},
        optional={
            "url": st.sampled_from(["https://example.com/a", "ftp://x", ""]) | SCALARS,
            "accountId": st.sampled_from(["acc_0123456789abcdef"]) | SCALARS,
            "provider": st.sampled_from(["plaid", "manual", "snaptrade", "other"]) | SCALARS,
            "ticker": st.sampled_from(["VTI"]) | SCALARS,
            "accounts": st.lists(
                st.fixed_dictionaries(
                    {"accountId": st.sampled_from(["a", ""]) | SCALARS},
                    optional={"provider": SCALARS},
                ),
                max_size=3,
            ),
        },
    ),
)
ROWS = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=2),
    st.fixed_dictionaries(
        {},
        optional={
            "source": st.sampled_from(["silvia://analysis"]) | SCALARS,
            "title": SCALARS,
            "cited_text": SCALARS,
            "target": TARGETS,
            "offset": SCALARS,
            "type": SCALARS,
            "search_result_index": SCALARS,
            "model_config": SCALARS,
            "_private": SCALARS,
        },
    ),
).map(lambda row: json.loads(json.dumps(row)))  # exactly what json.loads makes


def _model_outcome(build: Any) -> tuple[object, ...]:
    try:
        model = build()
    except ValidationError as error:
        return ("error", error.errors(include_url=False))
    return (
        type(model),
        list(model.__dict__.items()),
        list((model.__pydantic_extra__ or {}).items()),
        model.model_fields_set,
        model.__pydantic_private__,
        model.model_dump(),
        repr(model),
    )


@settings(max_examples=300)
@given(ROWS, st.sampled_from([Citation, InlineCitation]), st.none() | st.integers(0, 99))
def test_citation_from_json_is_model_validate(
    row: Any, model: type[Citation], offset: int | None
) -> None:
    assert _model_outcome(lambda: citation_from_json(model, row)) == _model_outcome(
        lambda: model.model_validate(row)
    )
    if isinstance(row, dict):
        assert _model_outcome(lambda: citation_from_json(model, row, offset)) == _model_outcome(
            lambda: model.model_validate({**row, "offset": offset})
        )


def test_citation_from_json_equals_model_validate_on_a_stored_row() -> None:
    row = {
        "type": "search_result_location",
        "source": "silvia://your-account/checking",
        "title": "Checking",
        "cited_text": "Balance: $1,234",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
        "target": {"kind": "account", "accountId": "acc_0123456789abcdef", "provider": "plaid"},
        "offset": 12,
    }
    fast = citation_from_json(InlineCitation, row)
    assert fast == InlineCitation.model_validate(row)
    assert fast.model_dump() == InlineCitation.model_validate(row).model_dump()
    assert load_json_citations([row, {"title": "no source"}], InlineCitation).citations == (fast,)


def test_citation_from_json_leaves_other_models_to_pydantic() -> None:
    class Strict(Citation):
        extra_field: int

    with pytest.raises(ValidationError):
        citation_from_json(Strict, {"source": "s"})


# --- events -----------------------------------------------------------------------


def _reference_text_event(data: str) -> object:
    # How any known event is read (events.py): JSON, then the documented shape.
    try:
        value = json.loads(data)
    except ValueError:
        return MalformedEvent("text", data, "invalid JSON")
    except RecursionError:
        return MalformedEvent("text", data, "nested too deeply")
    if not isinstance(value, dict):
        return MalformedEvent("text", data, f"expected an object, got {type(value).__name__}")
    text = value.get("text")
    if not isinstance(text, str):
        return MalformedEvent("text", data, "expected 'text' to be str")
    return TextEvent(text)


@given(JSON_TEXTS | st.dictionaries(st.sampled_from(["text", "t"]), SCALARS).map(json.dumps))
def test_a_text_event_reads_as_the_general_rule_says(data: str) -> None:
    assert decode_event("text", data, DEFAULT_WIRE) == _reference_text_event(data)


def test_deeply_nested_text_data_is_malformed_not_raised() -> None:
    event = decode_event("text", "[" * 100_000, DEFAULT_WIRE)
    assert isinstance(event, MalformedEvent)


def test_other_events_keep_their_rules() -> None:
    assert decode_event("done", " ", DEFAULT_WIRE) == DoneEvent()
    assert decode_event("done", "{", DEFAULT_WIRE) == MalformedEvent("done", "{", "invalid JSON")
    assert decode_event("ping", "{}", DEFAULT_WIRE) == UnknownEvent("ping", "{}")


# --- SSE --------------------------------------------------------------------------

PIECES = [
    "data", "data:", "data: ", "event", "event:", "event: ", "id", "id: ", "retry:", "retry: ",
    ":", ": ping", "x", "é", "\0", "12", "+3", " ", "\n", "\r", "\r\n", "\n\n", "\ufeff",
    "foo:", "a:b", "data:  x", "😀",
]  # fmt: skip


def plain_sse(body: bytes, limit: int | None) -> tuple[list[SSEFields], bool]:
    """The event-stream algorithm as the spec words it, on the whole body: the
    events, and whether a line or an event's data went over `limit` bytes."""

    def over(text: str) -> bool:
        return limit is not None and len(text.encode()) > limit

    # The stdlib's decoder, one leading BOM dropped; the bytes of a character not
    # finished at the end are not text yet (the stream might go on).
    text = codecs.getincrementaldecoder("utf-8-sig")("replace").decode(body)
    *lines, unended = re.split("\r\n|\r|\n", text)
    events: list[SSEFields] = []
    event, data, last_id, retry = "", list[str](), "", None
    for line in lines:
        if over(line):
            return events, True
        if not line:
            if data:
                events.append((event or "message", "\n".join(data), last_id, retry))
            event, data, retry = "", [], None
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
                if over("\n".join(data)):
                    return events, True
            elif name == "event":
                event = value
            elif name == "id" and "\0" not in value:
                last_id = value
            elif name == "retry":
                with suppress(ValueError):
                    retry = int(value)
    return events, over(unended)


def quick_sse(chunks: list[bytes], limit: int | None) -> tuple[list[SSEFields], bool]:
    events: list[SSEFields] = []
    try:
        events.extend(iter_sse_fields(chunks, max_event_bytes=limit))
    except EventTooLarge:
        return events, True
    return events, False


def sse_body(data: st.DataObject) -> bytes:
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES), max_size=30)))
    body = data.draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb"])) + text.encode()
    return body + data.draw(st.sampled_from([b"", b"\xff", b"\xe2\x82"]))


def cut(body: bytes, data: st.DataObject) -> list[bytes]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    return [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]


@settings(max_examples=600)
@given(st.data())
def test_sse_reads_as_the_plain_algorithm(data: st.DataObject) -> None:
    # The one loop (`_sse._read_events`): any body, cut anywhere, with or without a
    # limit, reads as the spec's algorithm reads the whole of it.
    body = sse_body(data)
    limit = data.draw(st.none() | st.integers(0, 40))
    assert quick_sse(cut(body, data), limit) == plain_sse(body, limit)


@settings(max_examples=300)
@given(st.data())
def test_iter_sse_fields_is_the_parser(data: st.DataObject) -> None:
    # The loop pulls the body's chunks in `iter_sse_fields`, and is fed them one at
    # a time in `SSEParser`; any body, cut anywhere, reads the same.
    chunks = cut(sse_body(data), data)
    parser = SSEParser()
    expected = [fields for chunk in chunks for fields in parser.feed_fields(chunk)]
    expected += parser.close_fields()
    assert list(iter_sse_fields(chunks)) == expected


# --- gc_paused --------------------------------------------------------------------


def test_gc_paused_nests_and_restores() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


# --- the chat stream's body -------------------------------------------------------

_TURN = (
    b'event: session\ndata: {"sessionId":"s1"}\n\n'
    b'event: text\ndata: {"text":"caf\xc3\xa9 "}\n\n'
    b": ping\n\n"
    b'event: text\ndata: {"text":"ok"}\n\n'
    b"event: done\ndata: {}\n\n"
)


def _clients(encoding: str | None) -> tuple[SilviaClient, AsyncSilviaClient]:
    body = gzip.compress(_TURN) if encoding == "gzip" else _TURN
    headers = {"content-type": "text/event-stream"}
    if encoding is not None:
        headers["content-encoding"] = encoding

    def handler(request: httpx.Request) -> httpx.Response:
        # Cut in small pieces, so that the decoder (when there is one) sees them.
        return httpx.Response(
            200, headers=headers, content=[body[i : i + 7] for i in range(0, len(body), 7)]
        )

    sync = SilviaClient(
        base_url="https://silvia.test",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )

    async def ahandler(request: httpx.Request) -> httpx.Response:
        async def chunks() -> Any:
            for i in range(0, len(body), 7):
                yield body[i : i + 7]

        return httpx.Response(200, headers=headers, content=chunks())

    asynchronous = AsyncSilviaClient(
        base_url="https://silvia.test",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(ahandler)),
    )
    return sync, asynchronous


@pytest.mark.parametrize("encoding", [None, "identity", "gzip"])
def test_a_stream_reads_the_same_with_or_without_content_encoding(encoding: str | None) -> None:
    sync, asynchronous = _clients(encoding)
    with sync, sync.chat.stream("hi") as stream:
        turn = stream.until_done()
    assert (turn.text, turn.session_id, turn.complete) == ("café ok", "s1", True)

    async def read() -> Any:
        async with asynchronous, asynchronous.chat.stream("hi") as stream:
            return await stream.until_done()

    turn = asyncio.run(read())
    assert (turn.text, turn.session_id, turn.complete) == ("café ok", "s1", True)
