"""`Recording.redacted()`: providers null, account ids pseudonymized, and the replay still typed."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client import Turn
from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    CitationTarget,
    is_account_id,
)
from silvia_client.sessions import Session
from silvia_client.testing import (
    IN_PROCESS_URL,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    ReferenceServer,
    record_turn,
)

from ._helpers import sse_events, walk_dicts

VENDORS = (b"plaid", b"snaptrade", b"manual")


def recorded(scenario: str) -> Recording:
    server = ReferenceServer()
    return record_turn(
        f"/scenario {scenario}", transport=server.transport(), base_url=IN_PROCESS_URL, token="t"
    )


def replayed(recording: Recording) -> tuple[Turn, Session]:
    with recording.client() as client, client.chat.stream("again") as stream:
        turn = stream.until_done()
        assert turn.session_id is not None
        return turn, client.sessions.get(turn.session_id)


def refs(target: CitationTarget | None) -> Iterator[AccountRef | AccountTarget]:
    if isinstance(target, AccountTarget):
        yield target
    elif isinstance(target, AccountsTarget):
        yield from target.accounts


def account_refs(turn: Turn, session: Session) -> list[AccountRef | AccountTarget]:
    rows = [*turn.inline_citations, *turn.citations]
    for message in session.messages:
        rows += [*message.inline_citations, *message.citations]
    return [ref for row in rows for ref in refs(row.target)]


def test_redaction_pseudonymizes_every_id_the_same_way_and_the_replay_stays_typed() -> None:
    for scenario in ["demo", "accounts", "account", "pooling"]:
        try:
            original = recorded(scenario)
            redacted = original.redacted()
            live = account_refs(*replayed(original))
            shared = account_refs(*replayed(redacted))
            assert live, "the scenario cites accounts"
            assert len(shared) == len(live)  # every account target still parses, typed

            names: dict[str, str] = {}
            for before, after in zip(live, shared, strict=True):
                assert names.setdefault(before.account_id, after.account_id) == after.account_id
                assert is_account_id(after.account_id)
                assert after.provider is None
            assert len(set(names.values())) == len(names)  # two accounts never share a pseudonym

            text = redacted.dumps()
            for account_id in names:
                assert account_id not in text
            for vendor in VENDORS:
                assert vendor not in redacted.response.body
                assert redacted.reload is not None
                assert vendor not in redacted.reload.body
            assert json.loads(text.splitlines()[0])["redacted"] is True
            assert redacted.is_redacted
            assert not original.is_redacted
        except AssertionError as error:
            raise AssertionError(f"case {(scenario,)!r}") from error


def test_ids_in_cited_text_become_the_same_pseudonyms() -> None:
    original = recorded("accounts")
    redacted = original.redacted()
    events = sse_events([redacted.response.body])
    [citation] = [data["citation"] for name, data in events if name == "citation"]
    pseudonyms = [ref["accountId"] for ref in citation["target"]["accounts"]]
    assert pseudonyms == ["acct_redacted_0001", "acct_redacted_0002"]
    for pseudonym in pseudonyms:
        assert f"account_id: {pseudonym}" in citation["cited_text"]


def test_every_provider_is_null_everywhere() -> None:
    redacted = recorded("demo").redacted()
    assert redacted.reload is not None
    values = [data for _, data in sse_events([redacted.response.body])]
    values.append(json.loads(redacted.reload.body))
    providers = [d["provider"] for value in values for d in walk_dicts(value) if "provider" in d]
    assert providers
    assert set(providers) == {None}


def test_the_rest_of_the_turn_and_the_chunking_are_unchanged() -> None:
    original = recorded("demo")
    redacted = original.redacted()
    live, _ = replayed(original)
    shared, _ = replayed(redacted)
    assert shared.text == live.text
    assert [c.source for c in shared.citations] == [c.source for c in live.citations]
    assert [c.offset for c in shared.inline_citations] == [c.offset for c in live.inline_citations]
    assert [c.at for c in redacted.response.chunks] == [c.at for c in original.response.chunks]
    assert redacted.response.end == original.response.end


BODY = (
    b'event: citation\ndata: {"citation":{"cited_text":"account_id: qwp76DaG7ehEQWRnp1RjCwEBmP6b,'
    b' row 12345678901234567890, caf\xc3\xa9","target":{"kind":"account",'
    b'"accountId":"qwp76DaG7ehEQWRnp1RjCwEBmP6b","provider":"plaid"}}}\n\n'
    b'event: citation\ndata: {"citation":{"target":{"kind":"account",'
    b'"accountId": "12345678901234567890", "provider" : "snaptrade"}}}\n\n'
)


def one_recording(chunks: list[bytes]) -> Recording:
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "hi"}),
        RecordedResponse(
            200,
            (("content-type", "text/event-stream"),),
            tuple(RecordedChunk(float(i), c) for i, c in enumerate(chunks)),
        ),
    )


WHOLE = one_recording([BODY]).redacted().response.body


def test_the_whole_body_redacts_as_documented() -> None:
    assert b"qwp76" not in WHOLE
    assert WHOLE.count(b"acct_redacted_0001") == 2
    assert WHOLE.count(b'"provider":null') == 2  # a changed event is written again, compact
    # All digits: not an account id by the doc's rule, so not the user's to hide.
    assert WHOLE.count(b"12345678901234567890") == 2
    assert "café".encode() in WHOLE


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=8))
def test_redaction_does_not_depend_on_where_the_chunks_split(cuts: list[int]) -> None:
    bounds = sorted({0, len(BODY), *cuts})
    chunks = [BODY[a:b] for a, b in itertools.pairwise(bounds)]
    redacted = one_recording(chunks).redacted()
    assert redacted.response.body == WHOLE
    assert len(redacted.response.chunks) <= len(chunks)
    # A boundary inside a rewritten event moves to its start: no event is split.
    ends = set(itertools.accumulate(len(c.data) for c in redacted.response.chunks))
    for event in redacted.response.body.split(b"\n\n"):
        start = redacted.response.body.index(event)
        assert not any(start < end < start + len(event) for end in ends)
    times = [chunk.at for chunk in redacted.response.chunks]
    assert times == sorted(times)
    assert Recording.loads(redacted.dumps()) == redacted


def test_a_pseudonym_never_collides_with_what_the_recording_holds() -> None:
    body = BODY + b'event: text\ndata: {"text":"acct_redacted_0001"}\n\n'
    redacted = one_recording([body]).redacted()
    assert b"acct_redacted_0002" in redacted.response.body
    assert redacted.response.body.count(b"acct_redacted_0001") == 1  # the text, untouched


def test_an_encoded_body_is_refused_rather_than_shared_unredacted() -> None:
    recording = Recording(
        RecordedRequest("POST", "/api/claude"),
        RecordedResponse(200, (("content-encoding", "gzip"),)),
        RecordedReload("/api/chat/sessions/s", 200),
    )
    with pytest.raises(ValueError, match="Content-Encoding: gzip"):
        recording.redacted()
