"""`Turn`: what a turn assembles, and one meaning per source per turn (the registry)."""

from __future__ import annotations

from typing import Any

import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from silvia_client.chat import (
    ChatEvent,
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    TextEvent,
    Turn,
    TurnBuilder,
)
from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    Citation,
    CitationTarget,
    InlineCitation,
    MarketDataTarget,
    WebTarget,
)

from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_C,
    ACCOUNT_SOURCE,
    CHAT_URL,
    FINAL_MESSAGE,
    WEB_URL,
    account,
    accounts,
    citation,
    done,
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


async def turn_of(api: Api, server: respx.MockRouter, *parts: bytes, **kwargs: Any) -> Turn:
    body = b"".join(parts)
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(body))
    return await api.turn(api.client(), **kwargs)


def agree(turn: Turn) -> None:
    """Every citation of the turn carries the target the registry gives its source."""
    for c in (*turn.citations, *turn.inline_citations):
        assert c.target == turn.target_for(c.source), c.source


# ---------------------------------------------------------------------------------------- assembly


async def test_turn_assembles_everything_that_arrived(api: Api, server: respx.MockRouter) -> None:
    turn = await turn_of(
        api,
        server,
        session("sess_1"),
        citation(row("silvia://your-portfolio", {"kind": "portfolio"})),  # offset 0
        text("You have "),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        text("$120"),
        text(" in checking. "),
        citation(row(WEB_URL, web())),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        event("thinking", '{"t": 1}'),
        event("text", "{bad"),
        summary([row(WEB_URL, web()), row(ACCOUNT_SOURCE, account(ACCOUNT_A))]),
        message(FINAL_MESSAGE),
        done(),
    )
    assert turn.text == "You have $120 in checking. "
    assert [(c.source, c.offset) for c in turn.inline_citations] == [
        ("silvia://your-portfolio", 0),
        (ACCOUNT_SOURCE, len("You have ")),
        (WEB_URL, len("You have $120 in checking. ")),
        (ACCOUNT_SOURCE, len("You have $120 in checking. ")),
    ]
    assert [c.source for c in turn.citations] == [WEB_URL, ACCOUNT_SOURCE]
    assert all(type(c) is Citation for c in turn.citations)
    assert all(isinstance(c, InlineCitation) for c in turn.inline_citations)
    assert turn.message == FINAL_MESSAGE
    assert turn.session_id == "sess_1"
    assert [(e.event, e.data) for e in turn.unknown_events] == [("thinking", '{"t": 1}')]
    assert [(e.event, e.data) for e in turn.malformed_events] == [("text", "{bad")]
    assert turn.complete
    assert turn.error is None
    assert turn.sources == ("silvia://your-portfolio", ACCOUNT_SOURCE, WEB_URL)
    agree(turn)


async def test_session_id_from_the_event_wins_over_the_one_passed(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(api, server, session("sess_new"), text("x"), done(), session_id="old")
    assert turn.session_id == "sess_new"


async def test_session_id_is_the_one_passed_without_a_session_event(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(api, server, text("x"), done(), session_id="sess_given")
    assert turn.session_id == "sess_given"
    turn = await turn_of(api, server, text("x"), done())
    assert turn.session_id is None


async def test_an_empty_turn(api: Api, server: respx.MockRouter) -> None:
    turn = await turn_of(api, server, done())
    assert (turn.text, turn.citations, turn.inline_citations, turn.message) == ("", (), (), None)
    assert turn.complete


# ------------------------------------------------------------------------------------ the registry


async def test_target_for(api: Api, server: respx.MockRouter) -> None:
    turn = await turn_of(
        api,
        server,
        citation(row(WEB_URL, web())),
        citation(
            row("silvia://market-data/finnhub/AAPL", {"kind": "market_data", "ticker": "AAPL"})
        ),
        citation(row("silvia://search/search_web")),
        done(),
    )
    assert turn.target_for(WEB_URL) == WebTarget(WEB_URL)
    assert turn.target_for("silvia://market-data/finnhub/AAPL") == MarketDataTarget("AAPL")
    assert turn.target_for("silvia://search/search_web") is None
    assert turn.target_for("never cited") is None


async def test_accounts_pool_across_citation_events_and_the_summary(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(
        api,
        server,
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_B, "plaid"))),
        text("a"),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A, "manual"))),
        text("b"),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_B, "plaid"))),  # same id: not twice
        summary([row(ACCOUNT_SOURCE, accounts((ACCOUNT_A, "manual"), (ACCOUNT_C, "snaptrade")))]),
        done(),
    )
    expected = AccountsTarget(
        (
            AccountRef(ACCOUNT_B, "plaid"),  # order of first appearance
            AccountRef(ACCOUNT_A, "manual"),
            AccountRef(ACCOUNT_C, "snaptrade"),
        )
    )
    assert turn.target_for(ACCOUNT_SOURCE) == expected
    assert [c.target for c in turn.inline_citations] == [expected] * 3
    assert [c.target for c in turn.citations] == [expected]
    agree(turn)


async def test_the_same_account_twice_stays_one_account(api: Api, server: respx.MockRouter) -> None:
    turn = await turn_of(
        api,
        server,
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A, "plaid"))),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A, None))),  # same id, provider unsaid
        summary([row(ACCOUNT_SOURCE, account(ACCOUNT_A, "plaid"))]),
        done(),
    )
    assert turn.target_for(ACCOUNT_SOURCE) == AccountTarget(ACCOUNT_A, "plaid")
    agree(turn)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (account(ACCOUNT_A), web()),  # an account source cited as a web page
        (web(), web("https://example.com/other")),
        ({"kind": "tax_reference", "url": WEB_URL}, web()),
        (account(ACCOUNT_A), None),  # once with ids, once without
        (None, account(ACCOUNT_A)),  # once without ids, once with
        ({"kind": "analysis"}, {"kind": "portfolio"}),
    ],
)
async def test_a_disagreement_leaves_the_source_untyped_for_good(
    api: Api,
    server: respx.MockRouter,
    first: dict[str, Any] | None,
    second: dict[str, Any] | None,
) -> None:
    source = "silvia://some/source"
    turn = await turn_of(
        api,
        server,
        citation(row(source, first)),
        text("x"),
        citation(row(source, second)),
        # Later events that would type the source again do not.
        citation(row(source, account(ACCOUNT_B))),
        summary([row(source, first if first is not None else account(ACCOUNT_A))]),
        done(),
    )
    assert turn.target_for(source) is None
    assert [c.target for c in turn.inline_citations] == [None, None, None]
    assert [c.target for c in turn.citations] == [None]
    agree(turn)


async def test_a_summary_that_disagrees_with_the_stream_untypes_the_source(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(
        api,
        server,
        citation(row(WEB_URL, web())),
        summary([row(WEB_URL, {"kind": "analysis"})]),
        done(),
    )
    assert turn.target_for(WEB_URL) is None
    agree(turn)


async def test_one_source_untyped_leaves_the_others_alone(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(
        api,
        server,
        citation(row(WEB_URL, web())),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        citation(row(ACCOUNT_SOURCE)),
        summary([row(WEB_URL, web()), row(ACCOUNT_SOURCE, account(ACCOUNT_A))]),
        done(),
    )
    assert turn.target_for(WEB_URL) == WebTarget(WEB_URL)
    assert turn.target_for(ACCOUNT_SOURCE) is None
    agree(turn)


# ------------------------------------------------------------------------ the rules, as properties

SOURCES = ("silvia://your-account/checking", "silvia://your-account/cards", "https://a.test/")
IDS = (ACCOUNT_A, ACCOUNT_B, ACCOUNT_C)
refs = st.builds(AccountRef, st.sampled_from(IDS), st.sampled_from(("plaid", "manual", None)))
targets: st.SearchStrategy[CitationTarget | None] = st.one_of(
    st.none(),
    st.builds(lambda r: AccountTarget(r.account_id, r.provider), refs),
    st.lists(refs, min_size=1, max_size=3, unique_by=lambda r: r.account_id).map(
        lambda rs: AccountsTarget(tuple(rs))
    ),
    st.sampled_from([WebTarget("https://a.test/"), WebTarget("https://b.test/"), AnalysisTarget()]),
)
observations = st.tuples(st.booleans(), st.sampled_from(SOURCES), targets)  # (summary?, ...)


def ids_of(target: CitationTarget | None) -> list[str] | None:
    if isinstance(target, AccountTarget):
        return [target.account_id]
    if isinstance(target, AccountsTarget):
        return [ref.account_id for ref in target.accounts]
    return None


def as_event(is_summary: bool, source: str, target: CitationTarget | None) -> ChatEvent:
    # From the wire form, as the stream builds them (the constructor reads `target`
    # as wire data too, so a target value passed to it would be read as None).
    wire = {"source": source, "target": None if target is None else target.to_wire()}
    if is_summary:
        return CitationsSummaryEvent((Citation.model_validate(wire),))
    return CitationEvent(InlineCitation.model_validate({**wire, "offset": 0}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(observations, max_size=12))
def test_registry_rules_hold_over_any_sequence(
    steps: list[tuple[bool, str, CitationTarget | None]],
) -> None:
    builder = TurnBuilder()
    before: dict[str, CitationTarget | None] = {}
    seen: dict[str, list[CitationTarget | None]] = {}
    for is_summary, source, new in steps:
        builder.apply(as_event(is_summary, source, new))
        builder.apply(TextEvent("x"))
        turn = builder.build()
        seen.setdefault(source, []).append(new)
        now = turn.target_for(source)
        if source in before:
            old = before[source]
            old_ids, now_ids = ids_of(old), ids_of(now)
            if old is None:  # untyped stays untyped
                assert now is None
            if old_ids is not None:  # accounts only grow, in order of first appearance
                assert now is None or (now_ids is not None and now_ids[: len(old_ids)] == old_ids)
            if old is not None and new != old and (ids_of(new) is None or old_ids is None):
                assert now is None  # any disagreement but account + account: untyped
            if new == old:
                assert now == old  # the same target again changes nothing
        else:
            assert now == new  # a first sighting is taken as it is
        now_ids = ids_of(now)
        if now_ids is not None:
            assert len(now_ids) == len(set(now_ids))  # no id twice
            named = {i for t in seen[source] for i in (ids_of(t) or [])}
            assert set(now_ids) <= named  # every pooled account was named for this source
        for other, target in before.items():  # other sources are untouched
            if other != source:
                assert turn.target_for(other) == target
        before = {s: turn.target_for(s) for s in turn.sources}
    builder.apply(DoneEvent())
    turn = builder.build()
    assert turn.complete
    for source, targets_seen in seen.items():
        if all(t == targets_seen[0] for t in targets_seen):
            assert turn.target_for(source) == targets_seen[0]  # no disagreement: kept as is
    agree(turn)
    assert len(turn.inline_citations) == sum(1 for s in steps if not s[0])
    assert len(turn.text) == len(steps)
