"""The HTML views' numbering and chips: first appearance, offsets, what a chip opens."""

from __future__ import annotations

from silvia_client.display import message_html, numbered_sources, turn_html
from silvia_client.testing import ReferenceServer

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web
from ._dom import answer_text, chips, parse, sources

# Numbering and chips ----------------------------------------------------------------------


def test_sources_are_numbered_by_first_appearance_and_chips_sit_at_their_offsets() -> None:
    a, b, c, d = (
        row(f"https://{n}.example/", n.upper(), web(f"https://{n}.example/")) for n in "abcd"
    )
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


def test_several_citations_at_one_offset_give_one_chip_per_source_even_at_the_start() -> None:
    a = row("https://a.example/", "A")
    b = row("https://b.example/", "B")
    turn = build_turn("Both", a, b, a, " end", a)
    assert chips(turn_html(turn)) == [(4, "[1]"), (4, "[2]"), (8, "[1]")]
    assert chips(turn_html(build_turn(a, "Text"))) == [(0, "[1]")]


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


def test_the_list_shows_a_sources_final_word_and_each_chip_its_own_row() -> None:
    untyped = row(CARDS_SRC, "Cards", cited_text="untyped")
    typed = row(CARDS_SRC, "Cards", target=account(ACCOUNT_A), cited_text="typed")
    link = f"/accounts/{ACCOUNT_A}"
    # Untyped then typed: after a checkpoint written before targets, then a fresh write.
    summary = [{**untyped, "target": typed["target"]}, typed]
    html = turn_html(build_turn("Was", untyped, " is", typed, ".", summary=summary))
    assert sources(html) == [("1", "Cards", [(link, "Open account")])]
    assert chip_links(html) == [("[1]", []), ("[1]", [link])]
    # Typed then untyped by the server: the summary's word, else the last row's.
    for summary in ([row(CARDS_SRC, "Cards")], []):
        html = turn_html(build_turn("A", typed, " b", untyped, ".", summary=summary))
        assert sources(html) == [("1", "Cards", [])]
        assert chip_links(html) == [("[1]", [link]), ("[1]", [])]


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


def test_live_and_reload_list_the_same_sources_and_the_numbers_match_the_chips() -> None:
    scenarios = ("demo", "pooling", "untyped-ids-then-none", "checkpoint-fresh-write", "search-web")
    with ReferenceServer().client() as client:
        for scenario in scenarios:
            turn = client.chat.send(f"/scenario {scenario}")
            assert turn.session_id is not None
            reloaded = client.sessions.get(turn.session_id).messages[-1]
            html = turn_html(turn)
            assert sources(html) == sources(message_html(reloaded)), scenario
            assert len(sources(html)) == len(turn.sources), scenario
            numbered = numbered_sources(turn.inline_citations, turn.citations)
            assert [s.number for s in numbered] == list(range(1, len(numbered) + 1)), scenario
            numbers = {s.citation.source: s.number for s in numbered}
            assert chips(html) == [
                (c.offset, f"[{numbers[c.source]}]") for c in turn.inline_citations
            ], scenario
