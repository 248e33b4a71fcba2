"""The HTML views: escaping, numbering, chips, links, no provider, the incomplete-turn note.

Outputs are parsed with `html.parser` (see `_dom.py`): a test asserts which
elements exist and what their text and attributes are, as a browser would read
them, rather than looking for substrings.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from silvia_client import ConfigurationError, SilviaClient
from silvia_client.citations import Citation, WebTarget
from silvia_client.display import (
    citation_html,
    citation_markdown,
    message_html,
    message_markdown,
    numbered_sources,
    session_html,
    session_markdown,
    turn_html,
    turn_markdown,
)
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer

from ._build import (
    ACCOUNT_A,
    ACCOUNT_B,
    account,
    accounts,
    build_session,
    build_turn,
    row,
    web,
)
from ._dom import Node, parse

SCRIPT = '<script>alert("x")</script>'


def answer(html: str) -> Node:
    return parse(html).find("p", "silvia-answer")


def chips(html: str) -> list[tuple[int, str]]:
    """(offset in the answer's text, chip text) for every chip, in document order."""
    out: list[tuple[int, str]] = []
    offset = 0
    for child in answer(html).children:
        if isinstance(child, str):
            offset += len(child)  # a `<br>` is followed by the newline it stands for
        elif child.tag == "br":
            continue
        else:
            assert child.tag == "sup"
            assert "silvia-chip" in (child.attrs["class"] or "")
            out.append((offset, child.text))
    return out


def answer_text(html: str) -> str:
    """The answer's text without its chips (a `<br>` is followed by the newline it stands for)."""
    return "".join(c for c in answer(html).children if isinstance(c, str))


def sources(html: str) -> list[tuple[str | None, str, list[tuple[str | None, str]]]]:
    """(number, label, [(href, link text)]) for every item of the sources list."""
    items = []
    for li in parse(html).find_all("li"):
        label = li.find("span", "silvia-label").text
        links = [(a.attrs.get("href"), a.text) for a in li.find_all("a")]
        items.append((li.attrs.get("value"), label, links))
    return items


# Escaping -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "markup",
    [SCRIPT, "<b>bold</b> & <i>co</i>", "<img src=x onerror=alert(1)>", "&lt;already&gt; &amp;"],
)
def test_server_text_in_titles_quotes_and_answers_shows_as_text(markup: str) -> None:
    turn = build_turn(
        f"Answer {markup} here",
        row(f"https://example.com/{markup[:3]}", title=f"Title {markup}", cited_text=markup),
    )
    html = turn_html(turn)
    tree = parse(html)
    # Only the view's own elements: nothing the server sent became an element.
    assert tree.tags() <= {"#root", "div", "p", "sup", "a", "ol", "li", "span", "br", "q"}
    assert answer_text(html) == f"Answer {markup} here"
    [(_, label, _)] = sources(html)
    assert label == f"Title {markup}"
    assert tree.find("q", "silvia-quote").text == markup
    assert tree.find("sup", "silvia-chip").attrs["title"] == f"Title {markup}"


def test_a_quote_in_a_url_stays_inside_the_href() -> None:
    url = 'https://example.com/a"onmouseover="alert(1)&b=<c>'
    turn = build_turn("See", row(url, "Page", target=web(url)))
    tree = parse(turn_html(turn))
    anchors = tree.find_all("a")
    assert anchors, "a web target is a link"
    for anchor in anchors:
        assert anchor.attrs["href"] == url
        assert set(anchor.attrs) == {"href", "target", "rel"}


def test_an_account_id_is_escaped_in_its_href() -> None:
    odd = 'id"with<markup>&spaces here'
    turn = build_turn("Balance", row("silvia://your-account/odd", "Odd", target=account(odd)))
    [(_, _, links)] = sources(turn_html(turn))
    assert links == [("/accounts/id%22with%3Cmarkup%3E%26spaces%20here", "Odd")]


def test_markup_in_a_session_title_and_role_shows_as_text() -> None:
    session = build_session(
        [{"id": "m1", "role": f"assistant {SCRIPT}", "content": f"Hi {SCRIPT}"}],
        title=f"Title {SCRIPT}",
    )
    tree = parse(session_html(session))
    assert "script" not in tree.tags()
    assert tree.find("h3").text == f"Title {SCRIPT}"
    message = tree.find("div", "silvia-message")
    assert message.find("p", "silvia-role").text == f"assistant {SCRIPT}"
    # The role becomes a class name only as letters, digits and dashes.
    assert all(part.replace("-", "").isalnum() for part in (message.attrs["class"] or "").split())
    assert message.find("p", "silvia-answer").text == f"Hi {SCRIPT}"


def test_dollar_signs_are_not_typeset_as_math() -> None:
    turn = build_turn("$4,210.55 in checking and $1,599.49 owed")
    root = parse(turn_html(turn)).find("div", "silvia-turn")
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set((root.attrs["class"] or "").split())
    assert answer_text(turn_html(turn)) == "$4,210.55 in checking and $1,599.49 owed"


def test_line_breaks_in_the_answer_are_kept() -> None:
    html = turn_html(build_turn("one\ntwo"))
    assert [c if isinstance(c, str) else c.tag for c in answer(html).children] == [
        "one",
        "br",
        "\ntwo",
    ]


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
                (f"/accounts/{ACCOUNT_A}", "Cards (1 of 2)"),
                (f"/accounts/{ACCOUNT_B}", "Cards (2 of 2)"),
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
    assert sources(html) == [("1", "Cards", [(f"/accounts/{ACCOUNT_B}", "Cards")])]
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
    assert sources(html) == [("1", "Checking", [(f"/accounts/{ACCOUNT_A}", "Checking")])]


# Links ------------------------------------------------------------------------------------


def test_links_by_target_kind() -> None:
    turn = build_turn(
        "a",
        row("silvia://your-account/checking", "Checking", target=account(ACCOUNT_A)),
        "b",
        row(
            "silvia://your-account/credit-card",
            "Credit card",
            target=accounts(ACCOUNT_A, ACCOUNT_B),
        ),
        "c",
        row(
            "https://news.example/x?a=1&b=2",
            "Article",
            target=web("https://news.example/x?a=1&b=2"),
        ),
        "d",
        row(
            "silvia://tax-authority/irs/p590.md",
            "Pub 590",
            target={"kind": "tax_reference", "url": None},
        ),
        "e",
        row("silvia://analysis", "Interest", target={"kind": "analysis"}),
    )
    assert sources(turn_html(turn)) == [
        ("1", "Checking", [(f"/accounts/{ACCOUNT_A}", "Checking")]),
        (
            "2",
            "Credit card",
            [
                (f"/accounts/{ACCOUNT_A}", "Credit card (1 of 2)"),
                (f"/accounts/{ACCOUNT_B}", "Credit card (2 of 2)"),
            ],
        ),
        ("3", "Article", [("https://news.example/x?a=1&b=2", "Article")]),
        ("4", "Pub 590", []),
        ("5", "Analysis", []),
    ]


@pytest.mark.parametrize(
    "source",
    ["javascript:alert(document.cookie)", "JaVaScRiPt:alert(1)", "data:text/html,<b>x</b>"],
)
def test_a_script_source_never_becomes_a_link(source: str) -> None:
    html = turn_html(build_turn("Hi", row(source, None)))
    tree = parse(html)
    assert tree.find_all("a") == []
    assert [label for _, label, _ in sources(html)] == [source]  # shown, as text


def test_a_hand_built_script_target_never_becomes_a_link() -> None:
    citation = Citation(source="x", title="X", target=WebTarget("javascript:alert(1)"))
    assert parse(citation_html(citation)).find_all("a") == []


def test_web_url_makes_account_links_absolute() -> None:
    turn = build_turn("a", row("silvia://your-account/checking", "Checking", target=account()))
    [(_, _, links)] = sources(turn_html(turn, web_url="https://app.example"))
    assert links == [(f"https://app.example/accounts/{ACCOUNT_A}", "Checking")]


def test_silvia_web_url_makes_notebook_links_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    turn = build_turn("a", row("silvia://your-account/checking", "Checking", target=account()))
    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    for html in (turn._repr_html_(), turn_html(turn)):
        [(_, _, links)] = sources(html)
        assert links == [(f"https://app.example/accounts/{ACCOUNT_A}", "Checking")]
    [(_, _, links)] = sources(turn_html(turn, web_url=""))  # "": the app's own paths
    assert links == [(f"/accounts/{ACCOUNT_A}", "Checking")]


def test_a_bad_web_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    turn = build_turn("a")
    with pytest.raises(ConfigurationError, match="web_url"):
        turn_html(turn, web_url="javascript:alert(1)")
    monkeypatch.setenv("SILVIA_WEB_URL", "app.example")
    with pytest.raises(ConfigurationError, match="SILVIA_WEB_URL"):
        turn_markdown(turn)


def _views() -> list[tuple[Callable[..., object], object]]:
    turn = build_turn("a", row("silvia://your-account/checking", "Checking", target=account()))
    session = build_session(
        [{"id": "m", "role": "assistant", "content": "x", "citations": [row("s", "T", account())]}]
    )
    message = session.messages[0]
    return [
        (turn_html, turn),
        (turn_markdown, turn),
        (session_html, session),
        (session_markdown, session),
        (message_html, message),
        (message_markdown, message),
        (citation_html, turn.citations[0]),
        (citation_markdown, turn.citations[0]),
    ]


@pytest.mark.parametrize(("view", "shown"), _views())
def test_base_url_is_a_deprecated_alias_of_web_url(
    view: Callable[..., object], shown: object
) -> None:
    web = "https://app.example"
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        old = view(shown, base_url=web)
    assert old == view(shown, web_url=web)
    assert f"{web}/accounts/{ACCOUNT_A}" in str(old)
    assert [w.filename for w in caught] == [__file__]  # one warning, at the caller's line
    with pytest.raises(TypeError, match="web_url= only"):
        view(shown, web_url=web, base_url=web)


def test_numbered_sources_takes_web_url_and_the_deprecated_base_url() -> None:
    citation = Citation.model_validate(row("s", "Checking", account()))
    [shown] = numbered_sources([], [citation], web_url="https://app.example")
    assert shown.resolved.href == f"https://app.example/accounts/{ACCOUNT_A}"
    with pytest.warns(DeprecationWarning, match="pass web_url="):
        [old] = numbered_sources([], [citation], base_url="https://app.example")
    assert old.resolved == shown.resolved


def test_a_citation_shows_label_links_and_quote() -> None:
    citation = Citation.model_validate(
        row("silvia://your-account/checking", "Checking", account(), cited_text="balance: 10")
    )
    tree = parse(citation._repr_html_())
    box = tree.find("div", "silvia-citation")
    assert box.find("span", "silvia-label").text == "Checking"
    assert [a.attrs["href"] for a in box.find_all("a")] == [f"/accounts/{ACCOUNT_A}"]
    assert box.find("q").text == "balance: 10"


# No provider ------------------------------------------------------------------------------


def _with_provider(provider: str | None) -> tuple[Any, ...]:
    checking = row("silvia://your-account/checking", "Checking", account(ACCOUNT_A, provider))
    cards = row(
        "silvia://your-account/credit-card",
        "Cards",
        accounts(ACCOUNT_A, ACCOUNT_B, provider=provider),
    )
    turn = build_turn("a", checking, "b", cards)
    session = build_session(
        [{"id": "m", "role": "assistant", "content": "x", "citations": [checking, cards]}]
    )
    return turn, session, Citation.model_validate(cards)


@pytest.mark.parametrize("provider", ["plaid", "snaptrade", "manual"])
def test_the_provider_changes_nothing_shown(provider: str) -> None:
    turn, session, citation = _with_provider(provider)
    bare_turn, bare_session, bare_citation = _with_provider(None)
    assert turn.citations[0].target.provider == provider
    for shown, bare in [
        (turn._repr_html_(), bare_turn._repr_html_()),
        (turn._repr_markdown_(), bare_turn._repr_markdown_()),
        (session._repr_html_(), bare_session._repr_html_()),
        (session._repr_markdown_(), bare_session._repr_markdown_()),
        (citation._repr_html_(), bare_citation._repr_html_()),
        (citation._repr_markdown_(), bare_citation._repr_markdown_()),
    ]:
        assert shown == bare
        assert "plaid" not in shown
        assert "snaptrade" not in shown


# The incomplete-turn note ---------------------------------------------------------------


def test_a_complete_turn_has_no_note() -> None:
    assert parse(turn_html(build_turn("Done."))).find_all("p", "silvia-note") == []


def test_an_incomplete_turn_says_so() -> None:
    turn = build_turn("Half", done=False)
    assert not turn.complete
    assert parse(turn_html(turn)).find("p", "silvia-note").text == "Incomplete turn."


def test_a_failed_turn_gives_the_servers_reason_escaped() -> None:
    turn = build_turn("Half", error=f"overloaded {SCRIPT}", done=False)
    tree = parse(turn_html(turn))
    assert "script" not in tree.tags()
    assert tree.find("p", "silvia-note").text == f"Incomplete turn: overloaded {SCRIPT}."


# Against the reference server -----------------------------------------------------------


@pytest.fixture
def client() -> Any:
    server = ReferenceServer()
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
    ):
        yield client


@pytest.mark.parametrize(
    "scenario",
    ["demo", "pooling", "untyped-ids-then-none", "checkpoint-fresh-write", "search-web"],
)
def test_live_and_reload_list_the_same_sources(client: SilviaClient, scenario: str) -> None:
    with client.chat.stream(f"/scenario {scenario}") as stream:
        turn = stream.until_done()
    assert turn.session_id is not None
    session = client.sessions.get(turn.session_id)
    reloaded = session.messages[-1]
    assert sources(turn_html(turn)) == sources(message_html(reloaded))
    assert len(sources(turn_html(turn))) == len(turn.sources)


def test_numbered_sources_match_the_chips(client: SilviaClient) -> None:
    with client.chat.stream("hi") as stream:
        turn = stream.until_done()
    numbered = numbered_sources(turn.inline_citations, turn.citations)
    assert [s.number for s in numbered] == list(range(1, len(numbered) + 1))
    html = turn_html(turn)
    assert [text for _, text in chips(html)] == [f"[{s.number}]" for s in numbered]
    assert [offset for offset, _ in chips(html)] == [c.offset for c in turn.inline_citations]


# Import time ------------------------------------------------------------------------------


def test_importing_the_package_or_the_command_does_not_import_display() -> None:
    code = (
        "import sys, silvia_client, silvia_client.cli; "
        "silvia_client.cli.build_parser(); "
        "print('silvia_client.display' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout == "False\n"


def test_the_hooks_are_the_display_functions() -> None:
    turn = build_turn("a", row("silvia://your-account/checking", "Checking", account()))
    session = build_session(
        [{"id": "m", "role": "assistant", "content": "x", "citations": [row("s", "T")]}]
    )
    assert turn._repr_html_() == turn_html(turn)
    assert session._repr_html_() == session_html(session)
    assert session.messages[0]._repr_html_() == message_html(session.messages[0])
    assert turn.inline_citations[0]._repr_html_() == citation_html(turn.inline_citations[0])
    for shown in (turn, session, session.messages[0], turn.citations[0]):
        assert isinstance(shown._repr_markdown_(), str)
