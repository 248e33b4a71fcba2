"""`Recording.redacted()`: no account id in any spelling (raw, JSON-escaped, percent-encoded,
in targets, cited rows, text, titles and URLs, chunked anywhere), no provider at any depth,
and the replay still typed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from silvia_client import Turn
from silvia_client.citations import AccountsTarget, AccountTarget, is_account_id
from silvia_client.testing import (
    Recording,
    RecordingFormatError,
)

from ..depth import examples
from ._helpers import made, recorded, sse_events

PROVIDERS = ("plaid", "snaptrade", "manual")
SESSION = "sess_0123456789abcdefghij"  # fits the id rule: it must survive
COLUMNS = (
    "account_id",
    "source_account_id",
    "snaptrade_account_id",
    "manual_account_uuid",
    "account_uuid",
    "plaid_account_id",
)
ACCOUNT = "qwp76DaG7ehEQWRnp1RjCwEBmP6b"

ids = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{15,40}", fullmatch=True).filter(
    lambda value: is_account_id(value) and "redacted" not in value
)
# Free text never says a provider word (an answer may, legitimately: it is no id).
free_text = st.text(alphabet=string.ascii_letters + " .,$", max_size=24).filter(
    lambda text: not re.search("plaid|snaptrade|manual|provider", text, re.IGNORECASE)
)


def escaped(draw: st.DrawFn, word: str, *, percent: bool = False) -> str:
    """`word` with some characters `\\u00XX` (or `%XX`): what a reader decodes to `word`."""
    mask = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    mark = "%{:02X}" if percent else "\\u{:04x}"
    return "".join(mark.format(ord(c)) if hide else c for c, hide in zip(word, mask, strict=True))


class Slots:
    """Placeholders put in the JSON before it is written, each spelled after."""

    def __init__(self) -> None:
        self.spelled: dict[str, str] = {}

    def put(self, spelling: str) -> str:
        slot = f"SLOT{len(self.spelled):04d}X"
        self.spelled[slot] = spelling
        return slot

    def write(self, value: object) -> str:
        text = json.dumps(value, separators=(",", ":"))
        for slot, spelling in self.spelled.items():
            text = text.replace(slot, spelling)
        return text


@st.composite
def citation(draw: st.DrawFn, slots: Slots, account_id: str, index: int) -> dict[str, Any]:
    """A citation naming `account_id` where ids stand, with its provider, and repeats."""
    provider = draw(st.sampled_from(PROVIDERS))
    key = slots.put(draw(st.sampled_from(["accountId", "account\\u0049d"])))
    provider_key = slots.put(draw(st.sampled_from(["provider", "provid\\u0065r"])))
    value = slots.put(draw(st.sampled_from([account_id, escaped(draw, account_id)])))
    row = {draw(st.sampled_from(COLUMNS)): account_id, "provider": provider, "balance": 12.5}
    quoted = draw(st.sampled_from(["json", "kv", "kv="]))
    if quoted == "json":
        cited = json.dumps(row)
    else:
        sep = ": " if quoted == "kv" else "="
        cited = ", ".join(f"{name}{sep}{item}" for name, item in row.items())
    title = draw(free_text) + " " + slots.put(escaped(draw, account_id, percent=True))
    return {
        "type": "search_result_location",
        "source": f"silvia://your-account/a{index}",
        "title": title,
        "cited_text": cited + " " + draw(free_text),
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 1,
        "target": {"kind": "account", key: value, provider_key: provider},
    }


@st.composite
def recordings(draw: st.DrawFn) -> tuple[Recording, list[str]]:
    accounts = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    slots = Slots()
    rows = [draw(citation(slots, account, i)) for i, account in enumerate(accounts)]
    mentions = " ".join(
        draw(free_text) + " " + slots.put(escaped(draw, account, percent=draw(st.booleans())))
        for account in accounts
    )
    url = f"https://bank.example/accounts/{accounts[0]}?x=1"
    events = [
        ("session", {"sessionId": SESSION}),
        ("text", {"text": mentions + " " + url}),
        *[("citation", {"citation": row}) for row in rows],
        ("citations_summary", {"citations": rows}),
        ("done", {}),
    ]
    body = "".join(f"event: {name}\ndata: {slots.write(data)}\n\n" for name, data in events)
    data = body.encode("utf-8")
    cuts = draw(st.lists(st.integers(min_value=1, max_value=len(data) - 1), max_size=6))
    bounds = sorted({0, len(data), *cuts})
    session = {
        "session": {"id": SESSION, "title": "t"},
        "messages": [
            {"id": "m1", "role": "user", "content": "hi", "citations": []},
            {"id": "m2", "role": "assistant", "content": mentions, "citations": rows},
        ],
    }
    recording = made(
        [data[a:b] for a, b in itertools.pairwise(bounds)],
        reload=slots.write(session).encode("utf-8"),
        reload_headers=(("content-type", "application/json"),),
        gap=0.001,
        message="hi " + accounts[0],
        session=SESSION,
    )
    return recording, accounts


_ESCAPE = re.compile(r"\\+u00([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})")


def nested(value: object) -> Iterator[tuple[str | None, object]]:
    """(key, value) at any depth, into strings that are JSON documents."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from nested(item)
    elif isinstance(value, list):
        for item in value:
            yield from nested(item)
    elif isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            yield from nested(json.loads(value))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recordings())
def test_no_spelling_of_a_found_id_and_no_provider_survives(
    generated: tuple[Recording, list[str]],
) -> None:
    original, accounts = generated
    redacted = Recording.loads(original.redacted().dumps())
    assert redacted.reload is not None
    bodies = [redacted.response.body.decode(), redacted.reload.body.decode(), redacted.dumps()]
    for text in bodies:
        # Every JSON escape and percent-encoding read, until nothing changes.
        while (new := _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)) != text:
            text = new
        for account in accounts:
            assert account not in text

    events = sse_events([redacted.response.body])
    assert [name for name, _ in events] == [
        name for name, _ in sse_events([original.response.body])
    ]
    for value in [data for _, data in events] + [json.loads(redacted.reload.body)]:
        for key, item in nested(value):
            if key == "provider":
                assert item is None

    turn, found = replayed(redacted)
    assert turn.session_id == SESSION  # fits the id rule, and survives
    assert len(found) == 3 * len(accounts)  # streamed, summarised, reloaded: each typed
    for ref in found:
        assert is_account_id(ref.account_id)
        assert ref.provider is None


def replayed(recording: Recording) -> tuple[Turn, list[Any]]:
    """The replayed turn, and every account reference of its rows and its reload's."""
    with recording.client() as client:
        turn = client.chat.send("again")
        assert turn.session_id is not None
        messages = client.sessions.get(turn.session_id).messages
    rows = [*turn.inline_citations, *turn.citations]
    for message in messages:
        rows += [*message.inline_citations, *message.citations]
    targets = [row.target for row in rows]
    return turn, [t for t in targets if isinstance(t, AccountTarget)] + [
        ref for t in targets if isinstance(t, AccountsTarget) for ref in t.accounts
    ]


def test_a_scenario_turn_or_the_whole_body_redacts_as_documented_or_is_refused() -> None:
    for scenario in ["demo", "accounts", "account", "pooling"]:
        original = recorded(scenario)
        redacted = original.redacted()
        live_turn, live = replayed(original)
        shared_turn, shared = replayed(redacted)
        assert live, scenario
        assert len(shared) == len(live), scenario  # every account target still parses, typed
        names: dict[str, str] = {}
        for before, after in zip(live, shared, strict=True):
            assert names.setdefault(before.account_id, after.account_id) == after.account_id
            assert is_account_id(after.account_id)
            assert after.provider is None
        assert len(set(names.values())) == len(names), scenario  # a pseudonym each
        text = redacted.dumps()
        assert not any(account_id in text for account_id in names), scenario
        assert redacted.reload is not None
        for vendor in PROVIDERS:
            assert vendor.encode() not in redacted.response.body + redacted.reload.body
        values = [data for _, data in sse_events([redacted.response.body])]
        values.append(json.loads(redacted.reload.body))
        found = [item for value in values for key, item in nested(value) if key == "provider"]
        assert found, scenario
        assert set(found) == {None}, scenario
        assert json.loads(text.splitlines()[0])["redacted"] is True
        assert (redacted.is_redacted, original.is_redacted) == (True, False)
        # The rest of the turn, the chunking and the timing are unchanged.
        assert shared_turn.text == live_turn.text
        assert [c.source for c in shared_turn.citations] == [c.source for c in live_turn.citations]
        offsets = [c.offset for c in live_turn.inline_citations]
        assert [c.offset for c in shared_turn.inline_citations] == offsets
        assert [c.at for c in redacted.response.chunks] == [c.at for c in original.response.chunks]
        assert redacted.response.end == original.response.end
    events = sse_events([recorded("accounts").redacted().response.body])
    [citation] = [data["citation"] for name, data in events if name == "citation"]
    pseudonyms = [ref["accountId"] for ref in citation["target"]["accounts"]]
    assert pseudonyms == ["acct_redacted_0001", "acct_redacted_0002"]
    for pseudonym in pseudonyms:  # the ids in the cited text became the same pseudonyms
        assert f"account_id: {pseudonym}" in citation["cited_text"]
    # The whole body redacts as documented, or is refused.
    assert WHOLE.startswith(KEPT)
    assert b"qwp76" not in WHOLE
    assert WHOLE.count(b"acct_redacted_0001") == 2
    # A changed event is written again, compact; all digits is not an account id by the
    # doc's rule, so not the user's to hide.
    assert WHOLE.endswith(
        b'event: citation\ndata: {"citation":{"target":{"kind":"account",'
        b'"accountId":"12345678901234567890","provider":null}}}\n\n'
    )
    assert WHOLE.count(b'"provider":null') == 2
    assert WHOLE.count(b"12345678901234567890") == 2
    assert "café".encode() in WHOLE
    body = BODY + b'event: text\ndata: {"text":"acct_redacted_0001"}\n\n'
    again = made([body]).redacted().response.body
    assert b"acct_redacted_0002" in again  # a pseudonym never collides with the text
    assert again.count(b"acct_redacted_0001") == 1
    # What redaction cannot clean is refused rather than shared.
    chunks = [
        b'event: text\ndata: {"text":"a"}\n\n',
        b'event: citation\ndata: {"target": {"provider": {"name": "pl\n\n',
    ]
    with pytest.raises(RecordingFormatError, match=r"^line 5: cannot redact chunk 2 ") as caught:
        made(chunks).redacted()
    assert "a provider member would remain" in str(caught.value)
    assert "pl" not in str(caught.value).split("would remain")[1]
    with pytest.raises(ValueError, match="Content-Encoding: gzip"):
        made([], headers=(("content-encoding", "gzip"),), reload=b"").redacted()


KEPT = (  # what a replay needs (though it fits the id rule), not the user's, or not readable
    b'event: session\ndata: {"sessionId":"sess_abcdefghijklmnopqr"}\n\n'
    b'event: unknown_event_name_longer\ndata: {"block":"block_index_0000000001"}\n\n'
    b'event: text\r\ndata:  {"text" :  "spaced"}\r\n\r\n'
    b"event: text\ndata: {not json at all\n\n"
    b"event: strange\ndata: \xff\xfe\n\n"
    b": a comment\n\n"
)
BODY = KEPT + (
    b'event: citation\ndata: {"citation":{"cited_text":"account_id: ' + ACCOUNT.encode() + b","
    b' row 12345678901234567890, caf\xc3\xa9","target":{"kind":"account",'
    b'"accountId":"' + ACCOUNT.encode() + b'","provider":"plaid"}}}\n\n'
    b'event: citation\ndata: {"citation":{"target":{"kind":"account",'
    b'"accountId": "12345678901234567890", "provider" : "snaptrade"}}}\n\n'
)
WHOLE = made([BODY]).redacted().response.body


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=8))
def test_redaction_does_not_depend_on_where_the_chunks_split(cuts: list[int]) -> None:
    bounds = sorted({0, len(BODY), *cuts})
    chunks = [BODY[a:b] for a, b in itertools.pairwise(bounds)]
    original = made(chunks, gap=1.0)
    redacted = original.redacted()
    assert redacted.response.body == WHOLE
    assert len(redacted.response.chunks) <= len(chunks)
    # A boundary inside a rewritten event moves to its start: none is split, and each
    # event still completes when it did.
    ends = set(itertools.accumulate(len(c.data) for c in redacted.response.chunks))
    for event in redacted.response.body[len(KEPT) :].split(b"\n\n"):
        start = redacted.response.body.index(event)
        assert not any(start < end < start + len(event) for end in ends)
    times = [chunk.at for chunk in redacted.response.chunks]
    assert times == sorted(times)
    assert set(times) <= {chunk.at for chunk in original.response.chunks}
    assert times[-1] == original.response.chunks[-1].at
    assert Recording.loads(redacted.dumps()) == redacted
