"""The chat stream's quick readings give what the general rules give.

A text or citation event read by the shortcut is what `decode_event` reads; a
whole chat stream, cut anywhere, is the plain algorithm's events decoded one
by one; a compressed body reads as a plain one.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import logging
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient, SilviaClient
from silvia_client.chat._turn import TurnBuilder
from silvia_client.chat.events import (
    CitationEvent,
    DoneEvent,
    MalformedEvent,
    TextEvent,
    UnknownEvent,
    decode_event,
    event_decoder,
)
from silvia_client.citations import InlineCitation
from silvia_client.errors import StreamError, StreamTooLargeError
from silvia_client.sessions import parse_session, read_session

from ..depth import examples
from .references import (
    JSON_TEXTS,
    PIECES,
    ROWS,
    SCALARS,
    cut,
    plain_sse,
)

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


def _reference_citation_event(data: str, offset: int) -> object:
    # How a citation event is read (events.py), with pydantic's own validation.
    try:
        value = json.loads(data)
    except ValueError:
        return MalformedEvent("citation", data, "invalid JSON")
    except RecursionError:
        return MalformedEvent("citation", data, "nested too deeply")
    if not isinstance(value, dict):
        return MalformedEvent("citation", data, f"expected an object, got {type(value).__name__}")
    row = value.get("citation")
    if not isinstance(row, dict):
        return MalformedEvent("citation", data, "expected 'citation' to be dict")
    try:
        return CitationEvent(InlineCitation.model_validate({**row, "offset": offset}))
    except ValidationError:
        return MalformedEvent("citation", data, "invalid citation")


@settings(max_examples=examples(300), deadline=None)
@given(
    JSON_TEXTS | ROWS.map(lambda row: json.dumps({"citation": row})),
    st.integers(0, 10_000),
)
def test_a_citation_event_reads_as_the_general_rule_says(data: str, offset: int) -> None:
    decode_event("citation", '{"citation": {"source": "s"}}', DEFAULT_WIRE)  # the quick path on
    assert decode_event("citation", data, DEFAULT_WIRE, offset) == _reference_citation_event(
        data, offset
    )


def test_deeply_nested_text_data_is_malformed_not_raised() -> None:
    event = decode_event("text", "[" * 100_000, DEFAULT_WIRE)
    assert isinstance(event, MalformedEvent)


def test_other_events_keep_their_rules() -> None:
    assert decode_event("done", " ", DEFAULT_WIRE) == DoneEvent()
    assert decode_event("done", "{", DEFAULT_WIRE) == MalformedEvent("done", "{", "invalid JSON")
    assert decode_event("ping", "{}", DEFAULT_WIRE) == UnknownEvent("ping", "{}")


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


# --- the chat stream's quick reading ----------------------------------------------
# The stream reads runs of canonical events by regular expression, and text events
# of the plain shape straight off the wire (`EventDecoder.quick`): any body, cut
# anywhere, must give the events that the spec's algorithm and `decode_event` give.

_TEXTS = st.text(max_size=8) | st.sampled_from(['a"b', "a\\b", "\\u00e9", "\x1f", "\ud800", "€"])


def _text_data(text: str, style: int) -> str:
    if style == 0:  # as a server writes it compactly: the shortcut's shape, when it can be
        return json.dumps({"text": text}, separators=(",", ":"), ensure_ascii=False)
    if style == 1:
        return json.dumps({"text": text})  # spaced, escaped: the general way
    return '{"text":"' + text + '"}'  # raw: not always JSON, or not this text


_CHAT_ELEMENTS = st.one_of(
    st.builds(
        lambda text, style: f"event: text\ndata: {_text_data(text, style)}\n\n",
        _TEXTS,
        st.integers(0, 2),
    ),
    ROWS.map(lambda row: "event: citation\ndata: " + json.dumps({"citation": row}) + "\n\n"),
    st.sampled_from(
        [
            ": ping\n\n",
            "\n",
            'event: session\ndata: {"sessionId":"s1"}\n\n',
            "event: done\ndata: {}\n\n",
            "event: tool\ndata: {}\n\n",
            "event: text\ndata: [1]\n\n",
            'event: text\r\ndata: {"text":"crlf"}\r\n\r\n',
            'id: 7\nevent: text\ndata: {"text":"x"}\n\n',
        ]
    ),
    st.sampled_from(PIECES),
)


def _expected_chat(body: bytes, limit: int) -> tuple[list[object], str]:
    """The events a stream must yield, and how it ends, by the plain algorithm."""
    events, over = plain_sse(body, limit)
    builder = TurnBuilder()
    expected: list[object] = []
    for name, data, _, _ in events:
        event = decode_event(name, data, DEFAULT_WIRE, builder.text_length)
        builder.apply(event)
        expected.append(event)
        if isinstance(event, DoneEvent):
            return expected, "done"
    return expected, "too large" if over else "incomplete"


def _chat_client(chunks: list[bytes], limit: int) -> tuple[SilviaClient, AsyncSilviaClient]:
    headers = {"content-type": "text/event-stream"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, content=iter(chunks))

    async def ahandler(request: httpx.Request) -> httpx.Response:
        async def body() -> Any:
            for chunk in chunks:
                yield chunk

        return httpx.Response(200, headers=headers, content=body())

    base = "https://silvia.test"
    return (
        SilviaClient(
            base_url=base,
            max_event_bytes=limit,
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        ),
        AsyncSilviaClient(
            base_url=base,
            max_event_bytes=limit,
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(ahandler)),
        ),
    )


def _ending(error: StreamError | None) -> str:
    if error is None:
        return "done"
    return "too large" if isinstance(error, StreamTooLargeError) else "incomplete"


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_a_chat_stream_reads_as_the_plain_algorithm_and_decode_event(data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(_CHAT_ELEMENTS, max_size=25)))
    body = data.draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + text.encode(
        "utf-8", "surrogatepass"
    )
    limit = data.draw(st.sampled_from([10**9, 4096]) | st.integers(1, 300))
    chunks = cut(body, data)
    expected, ending = _expected_chat(body, limit)
    sync, asynchronous = _chat_client(chunks, limit)

    read: list[object] = []
    error: StreamError | None = None
    with sync:
        try:
            for event in sync.chat.stream("hi"):
                read.append(event)
        except StreamError as failure:
            error = failure
        assert (read, _ending(error)) == (expected, ending)

        # Every event decoded by name and data, each beside its own (no shortcut).
        raw: list[tuple[str, str]] = []
        read = []
        try:
            with sync.chat.stream("hi") as stream:
                for sent, event in stream.iter_with_raw():
                    raw.append((sent.name, sent.data))
                    read.append(event)
        except StreamError:
            pass
        plain = [(name, value) for name, value, _, _ in plain_sse(body, limit)[0]]
        assert (raw, read) == (plain[: len(expected)], expected)

    async def aread() -> tuple[list[object], StreamError | None]:
        events: list[object] = []
        async with asynchronous:
            try:
                async for event in asynchronous.chat.stream("hi"):
                    events.append(event)
            except StreamError as failure:
                return events, failure
        return events, None

    events, ended_with = asyncio.run(aread())
    assert (events, _ending(ended_with)) == (expected, ending)


@given(_TEXTS | JSON_TEXTS, st.integers(0, 2))
def test_the_text_shortcut_reads_what_decode_event_reads(text: str, style: int) -> None:
    data = _text_data(text, style) if style < 3 else text
    quick = event_decoder(DEFAULT_WIRE).quick
    element = f"event: text\ndata: {data}\n\n"
    if "\n" in data or "\r" in data:
        return  # not one canonical event
    (read,) = quick.findall(element)
    shortcut, name, _ = read
    if not name:  # the shortcut read it
        assert TextEvent(shortcut) == decode_event("text", data, DEFAULT_WIRE)
    else:
        assert read == ("", "text", data)


def test_a_session_logs_its_bad_rows_after_the_collectors_pause() -> None:
    # A logging handler is the caller's code: it runs with the collector on, and
    # gets the warning each list with bad rows gives, as `load_citations` logs it.
    records: list[tuple[str, bool]] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append((record.getMessage(), gc.isenabled()))

    body = {
        "session": {"id": "s"},
        "messages": [
            {"role": "assistant", "citations": [{"title": "no source"}, "x"]},
            {"role": "assistant", "inline_citations": [{"source": 5}], "citations": []},
        ],
    }
    logger = logging.getLogger("silvia_client")
    handler = Handler()
    logger.addHandler(handler)
    try:
        read_session(json.dumps(body).encode(), "s")
        parse_session(body, "s")
    finally:
        logger.removeHandler(handler)
    expected = [
        ("skipped 2 malformed citation row(s)", True),
        ("skipped 1 malformed citation row(s)", True),
    ]
    assert records == expected * 2
