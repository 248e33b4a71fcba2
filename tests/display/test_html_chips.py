"""The HTML views' numbering and chips: first appearance, offsets, what a chip opens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from silvia_client import SilviaClient
from silvia_client.display import message_html, numbered_sources, turn_html
from silvia_client.testing import ReferenceServer

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web
from ._dom import parse
from ._html_parts import answer_text, chips, sources

# Numbering and chips ----------------------------------------------------------------------


def test_sources_are_numbered_by_first_appearance_and_chips_sit_at_their_offsets() -> None:
    a = row("https://a.example/", "A", target=web("https://a.example/"))
    b = row("https://b.example/", "B", target=web("https://b.example/"))
    c = row("https://c.example/", "C", target=web("https://c.example/"))
    d = row("https://d.example/", "D", target=web("https://d.example/"))
    turn = build_turn(
        "First", b, " second", a, " third", b, " fourth", c, ".", summary=[a, b, c, d]
    )
    html = turn_html(turn)
    # B streamed first, so it is 1, though the summary lists A first; D, only in the
    # summary, comes last.
    assert [(number, label) for number, label, _ in sources(html)] == [
        ("1", "B"),
        ("2", "A"),
        ("3", "C"),
        ("4", "D"),
    ]
    assert chips(html) == [(5, "[1]"), (12, "[2]"), (18, "[1]"), (25, "[3]")]
    assert answer_text(html) == turn.text


def test_several_citations_at_one_offset_give_one_chip_per_source() -> None:
    a = row("https://a.example/", "A")
    b = row("https://b.example/", "B")
    turn = build_turn("Both", a, b, a, " end", a)
    assert chips(turn_html(turn)) == [(4, "[1]"), (4, "[2]"), (8, "[1]")]


def test_a_citation_before_any_text_is_a_chip_at_the_start() -> None:
    turn = build_turn(row("https://a.example/", "A"), "Text")
    assert chips(turn_html(turn)) == [(0, "[1]")]


def test_a_chip_links_to_its_source_when_it_has_exactly_one_link() -> None:
    turn = build_turn(
        "One",
        row("silvia://your-account/checking", "Checking", target=account(ACCOUNT_A)),
        " two",
        row("silvia://your-account/cards", "Cards", target=accounts(ACCOUNT_A, ACCOUNT_B)),
        " three",
        row(
            "silvia://market-data/finnhub/AAPL",
            "Quote",
            target={"kind": "market_data", "ticker": "AAPL"},
        ),
    )
    found = [
        (chip.attrs["title"], [a.attrs["href"] for a in chip.find_all("a")])
        for chip in parse(turn_html(turn)).find_all("sup", "silvia-chip")
    ]
    assert found == [
        ("Checking", [f"/accounts/{ACCOUNT_A}"]),
        ("Cards", []),  # two accounts: the list below links both
        ("AAPL", []),  # labelled by its ticker, nothing to open
    ]


def chip_links(html: str) -> list[tuple[str, list[str | None]]]:
    """(chip text, hrefs it opens) for every chip, in document order."""
    return [
        (chip.text, [a.attrs["href"] for a in chip.find_all("a")])
        for chip in parse(html).find_all("sup", "silvia-chip")
    ]


CARDS_SRC = "silvia://your-account/credit-card"


def test_pooled_accounts_list_the_final_target_and_each_chip_opens_its_own_row() -> None:
    one = row(CARDS_SRC, "Cards", target=account(ACCOUNT_A), cited_text="first card")
    both = row(CARDS_SRC, "Cards", target=accounts(ACCOUNT_A, ACCOUNT_B), cited_text="both")
    summary = [{**one, "target": both["target"]}, both]
    html = turn_html(build_turn("First", one, " then both", both, ".", summary=summary))
    # One source, one number; the list shows where it ended: both cards.
    assert sources(html) == [
        (
            "1",
            "Cards",
            [
                (f"/accounts/{ACCOUNT_A}", "Open account (1 of 2)"),
                (f"/accounts/{ACCOUNT_B}", "Open account (2 of 2)"),
            ],
        )
    ]
    # The first chip streamed when the server had one card: it opens that card.
    assert chip_links(html) == [("[1]", [f"/accounts/{ACCOUNT_A}"]), ("[1]", [])]


def test_a_source_untyped_then_typed_lists_its_final_target_and_chips_as_sent() -> None:
    # After a checkpoint written before targets, then a fresh write (as the server sends it).
    untyped = row(CARDS_SRC, "Cards", cited_text="before")
    typed = row(CARDS_SRC, "Cards", target=account(ACCOUNT_B), cited_text="after")
    summary = [{**untyped, "target": typed["target"]}, typed]
    html = turn_html(build_turn("Was", untyped, " is", typed, ".", summary=summary))
    assert sources(html) == [("1", "Cards", [(f"/accounts/{ACCOUNT_B}", "Open account")])]
    assert chip_links(html) == [("[1]", []), ("[1]", [f"/accounts/{ACCOUNT_B}"])]


def test_a_source_the_server_untyped_lists_no_link_but_its_typed_chip_keeps_one() -> None:
    typed = row(CARDS_SRC, "Cards", target=account(ACCOUNT_A), cited_text="with an id")
    untyped = row(CARDS_SRC, "Cards", cited_text="without")
    for summary in ([row(CARDS_SRC, "Cards")], []):  # the summary's word, else the last row's
        html = turn_html(build_turn("A", typed, " b", untyped, ".", summary=summary))
        assert sources(html) == [("1", "Cards", [])]
        assert chip_links(html) == [("[1]", [f"/accounts/{ACCOUNT_A}"]), ("[1]", [])]


def test_history_rows_without_offsets_get_no_chips_but_are_listed() -> None:
    session = build_session(
        [
            {
                "id": "m1",
                "role": "assistant",
                "content": "Checking holds $10.",
                "citations": [row("silvia://your-account/checking", "Checking", account())],
                "inline_citations": [row("silvia://your-account/checking", "Checking", account())],
            }
        ]
    )
    html = message_html(session.messages[0])
    assert chips(html) == []
    assert sources(html) == [("1", "Checking", [(f"/accounts/{ACCOUNT_A}", "Open account")])]


# Against the reference server -----------------------------------------------------------


@pytest.fixture
def client() -> Iterator[SilviaClient]:
    with ReferenceServer().client() as client:
        yield client


def test_live_and_reload_list_the_same_sources(client: SilviaClient) -> None:
    scenarios = ("demo", "pooling", "untyped-ids-then-none", "checkpoint-fresh-write", "search-web")
    for scenario in scenarios:
        with client.chat.stream(f"/scenario {scenario}") as stream:
            turn = stream.until_done()
        assert turn.session_id is not None
        reloaded = client.sessions.get(turn.session_id).messages[-1]
        assert sources(turn_html(turn)) == sources(message_html(reloaded)), scenario
        assert len(sources(turn_html(turn))) == len(turn.sources), scenario


def test_numbered_sources_match_the_chips(client: SilviaClient) -> None:
    with client.chat.stream("hi") as stream:
        turn = stream.until_done()
    numbered = numbered_sources(turn.inline_citations, turn.citations)
    assert [s.number for s in numbered] == list(range(1, len(numbered) + 1))
    html = turn_html(turn)
    assert [text for _, text in chips(html)] == [f"[{s.number}]" for s in numbered]
    assert [offset for offset, _ in chips(html)] == [c.offset for c in turn.inline_citations]
