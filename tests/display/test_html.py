"""The HTML views: server text escaped, numbering and chips, links by kind, `web_url`, no provider.

That no server string runs a script or makes a link other than http(s) or an account
page, in every view and field, is `test_browser.py`'s hostile corpus, in Chromium.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from silvia_client import ConfigurationError, _text, display
from silvia_client.citations import Citation, resolve_citation
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
from silvia_client.display._html import KIND_NAMES
from silvia_client.testing import ReferenceServer

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web
from ._dom import VIEW_TAGS, answer, chip_links, chips, parse, sources

SCRIPT = '<script>alert("x")</script>'
WEB_URL = "https://app.example"
CHECKING = row("silvia://your-account/checking", "Checking", account())
CARDS = "silvia://your-account/credit-card"


def test_server_text_in_every_field_of_a_turn_and_a_session_shows_as_text() -> None:
    for markup in (SCRIPT, "<b>b</b> & <i>co</i>", "<img src=x onerror=alert(1)>", "&lt;a&gt;"):
        turn = build_turn(
            f"Answer {markup} here",
            row(f"https://example.com/{markup[:3]}", title=f"Title {markup}", cited_text=markup),
            error=f"overloaded {markup}",
            done=False,
        )
        html = turn_html(turn)
        tree = parse(html)
        assert tree.tags() - {"#root"} <= VIEW_TAGS, markup
        answer_text = "".join(c for c in answer(html).children if isinstance(c, str))
        assert answer_text == f"Answer {markup} here"  # without its chip
        [(_, label, _)] = sources(html)
        assert label == f"Title {markup}"
        assert tree.find("q", "silvia-quote").text == markup
        assert tree.find("sup", "silvia-chip").attrs["title"] == f"Title {markup}"
        # An incomplete turn says so, with the server's reason.
        assert tree.find("p", "silvia-note").text == f"Incomplete turn: overloaded {markup}."
        session = build_session(
            [{"id": "m1", "role": f"assistant {markup}", "content": f"Hi {markup}"}],
            title=f"Title {markup}",
        )
        tree = parse(session_html(session))
        assert tree.tags() - {"#root"} <= VIEW_TAGS, markup
        assert tree.find("h3").text == f"Title {markup}"
        message = tree.find("div", "silvia-message")
        assert message.find("p", "silvia-role").text == f"assistant {markup}"
        # The role becomes a class name only as letters, digits and dashes.
        classes = (message.attrs["class"] or "").split()
        assert all(part.replace("-", "").isalnum() for part in classes), markup
        assert message.find("p", "silvia-answer").text == f"Hi {markup}"
    assert parse(turn_html(build_turn("Done."))).find_all("p", "silvia-note") == []
    [note] = parse(turn_html(build_turn("Half", done=False))).find_all("p", "silvia-note")
    assert note.text == "Incomplete turn."


def test_dollar_signs_are_not_math_and_line_breaks_are_kept() -> None:
    turn = build_turn("$4,210.55 in checking\nand $1,599.49 owed")
    root = parse(turn_html(turn)).find("div", "silvia-turn")
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set((root.attrs["class"] or "").split())
    lines = ["$4,210.55 in checking", "br", "\nand $1,599.49 owed"]
    children = answer(turn_html(turn)).children
    assert [c if isinstance(c, str) else c.tag for c in children] == lines


def test_live_and_reload_list_the_same_sources_and_the_numbers_match_the_chips() -> None:
    scenarios = ("demo", "pooling", "untyped-ids-then-none", "checkpoint-fresh-write", "search-web")
    with ReferenceServer().client() as client:
        for scenario in scenarios:
            turn = client.chat.send(f"/scenario {scenario}")
            assert turn.session_id is not None
            reloaded = client.sessions.get(turn.session_id).messages[-1]
            html, reloaded_html = turn_html(turn), message_html(reloaded)
            assert sources(html) == sources(reloaded_html), scenario
            assert chips(reloaded_html) == [], scenario  # history rows carry no offsets
            assert len(sources(html)) == len(turn.sources), scenario
            numbered = numbered_sources(turn.inline_citations, turn.citations)
            # The list links each source by its final word (`target_for`), the server's
            # checkpoints and pooling included.
            assert [[h for h, _ in links] for _, _, links in sources(html)] == [
                [link.href for link in s.resolved.links] for s in numbered
            ], scenario
            assert all(s.citation.target == turn.target_for(s.source) for s in numbered), scenario
            numbers = {s.citation.source: s.number for s in numbered}
            assert chips(html) == [
                (c.offset, f"[{numbers[c.source]}]") for c in turn.inline_citations
            ], scenario


TARGETS = {
    "web": web("https://e.example/a?b=1&c=2"),
    "tax_reference": {"kind": "tax_reference", "url": "https://irs.example/p590"},
    "card_document": {"kind": "card_document", "url": None},
    "mortgage_reference": {"kind": "mortgage_reference", "url": "https://cfpb.example/x"},
    "market_data": {"kind": "market_data", "ticker": "AAPL"},
    "analysis": {"kind": "analysis"},
    "account": account(ACCOUNT_A),
    "accounts": accounts(ACCOUNT_A, ACCOUNT_B),
    "portfolio": {"kind": "portfolio"},
}


def test_each_kind_has_its_badge_its_links_and_its_chip() -> None:
    cited = [row(f"silvia://{kind}", kind.title(), target) for kind, target in TARGETS.items()]
    cited.append(row("https://legacy.example/page", "Old page"))  # untyped: the source links
    cited.append(row("javascript:alert(1)", None))  # a script source: shown, never a link
    html = turn_html(build_turn(*[piece for c in cited for piece in ("x ", c)]))
    items = parse(html).find("ol", "silvia-sources").find_all("li")
    assert [li.find("span", "silvia-badge").text for li in items] == [
        *KIND_NAMES.values(),
        "Untyped",
        "Untyped",
    ]
    assert len({li.find("span", "silvia-badge").attrs["class"] for li in items[:-1]}) == 10
    listed = sources(html)
    # A chip links to its source when the source has exactly one link.
    one_link = [
        (f"[{n}]", [h for h, _ in found] if len(found) == 1 else []) for n, _, found in listed
    ]
    assert chip_links(html) == one_link
    # The list links what `resolve_citation` resolves (tests/citations), with the view's words.
    resolved = [resolve_citation(Citation.model_validate(c)) for c in cited]
    assert [(label, [h for h, _ in found]) for _, label, found in listed] == [
        (r.label, [link.href for link in r.links]) for r in resolved
    ]
    texts = {label: [text for _, text in found] for _, label, found in listed if found}
    assert texts == {
        **{label: ["Open page"] for label in ("Web", "Old page")},
        **{label: ["Open document"] for label in ("Tax_Reference", "Mortgage_Reference")},
        "Account": ["Open account"],
        "Accounts": ["Open account (1 of 2)", "Open account (2 of 2)"],
    }


def test_web_url_else_silvia_web_url_makes_account_links_absolute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    turn = build_turn("a", CHECKING)
    absolute, relative = f"{WEB_URL}/accounts/{ACCOUNT_A}", f"/accounts/{ACCOUNT_A}"
    assert chip_links(turn_html(turn, web_url=WEB_URL)) == [("[1]", [absolute])]
    monkeypatch.setenv("SILVIA_WEB_URL", WEB_URL)  # read when shown: the hooks take no argument
    assert chip_links(turn._repr_html_()) == [("[1]", [absolute])]
    assert f"[Open account]({absolute})" in turn._repr_markdown_()
    # "": the app's own paths
    assert chip_links(turn_html(turn, web_url="")) == [("[1]", [relative])]
    assert f"[Open account]({relative})" in turn_markdown(turn, web_url="")
    monkeypatch.setenv("SILVIA_WEB_URL", "app.example")
    with pytest.raises(ConfigurationError, match="SILVIA_WEB_URL"):
        turn_markdown(turn)


def test_base_url_is_a_deprecated_alias_of_web_url() -> None:
    turn = build_turn("a", CHECKING)
    session = build_session(
        [{"id": "m", "role": "assistant", "content": "x", "citations": [row("s", "T", account())]}]
    )
    message = session.messages[0]
    views: list[tuple[Callable[..., object], object]] = [
        *((view, turn) for view in (turn_html, turn_markdown)),
        *((view, session) for view in (session_html, session_markdown)),
        *((view, message) for view in (message_html, message_markdown)),
        *((view, turn.citations[0]) for view in (citation_html, citation_markdown)),
    ]
    for view, shown in views:
        with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
            old = view(shown, base_url=WEB_URL)
        assert old == view(shown, web_url=WEB_URL), view
        assert [w.filename for w in caught] == [__file__], view  # one, at the caller's line
    citation = Citation.model_validate(row("s", "Checking", account()))
    [shown] = numbered_sources([], [citation], web_url=WEB_URL)
    assert shown.resolved.href == f"{WEB_URL}/accounts/{ACCOUNT_A}"
    with pytest.warns(DeprecationWarning, match="pass web_url="):
        [old] = numbered_sources([], [citation], base_url=WEB_URL)
    assert old.resolved == shown.resolved


def test_the_hooks_are_the_display_functions_and_a_citation_shows_label_links_and_quote() -> None:
    citation = Citation.model_validate({**CHECKING, "cited_text": "balance: 10, name: C"})
    box = parse(citation._repr_html_()).find("div", "silvia-citation")
    assert box.find("span", "silvia-label").text == "Checking"
    assert box.find("span", "silvia-badge").text == "Account"
    assert [a.attrs["href"] for a in box.find_all("a")] == [f"/accounts/{ACCOUNT_A}"]
    assert box.find("a").attrs["title"] == "Checking"  # the label, as the link's title
    kv = box.find("dl", "silvia-kv")  # a `key: value` quote is a key/value list
    assert [(n.tag, n.text) for n in kv.children if not isinstance(n, str)] == [
        ("dt", "balance"),
        ("dd", "10"),
        ("dt", "name"),
        ("dd", "C"),
    ]
    turn = build_turn("a", CHECKING)
    session = build_session(
        [{"id": "m", "role": "assistant", "content": "x", "citations": [row("s", "T")]}]
    )
    hooked: list[tuple[Any, Callable[..., str], Callable[..., str]]] = [
        (turn, turn_html, turn_markdown),
        (session, session_html, session_markdown),
        (session.messages[0], message_html, message_markdown),
    ]
    for value, html_view, markdown_view in hooked:
        assert value._repr_html_() == html_view(value)
        assert value._repr_markdown_() == markdown_view(value)
    # Public for the `silvia` command and anyone showing server text (tests/test_text.py).
    assert display.strip_bidi_controls is _text.strip_bidi_controls
    assert "strip_bidi_controls" in display.__all__


def test_the_provider_changes_nothing_shown() -> None:
    def shown(provider: str | None) -> list[str]:
        checking = row("silvia://your-account/checking", "Checking", account(ACCOUNT_A, provider))
        cards = row(CARDS, "Cards", accounts(ACCOUNT_A, ACCOUNT_B, provider=provider))
        turn = build_turn("a", checking, "b", cards)
        assert getattr(turn.citations[0].target, "provider", 0) == provider  # there, left out
        session = build_session(
            [{"id": "m", "role": "assistant", "content": "x", "citations": [checking, cards]}]
        )
        values = (turn, session, Citation.model_validate(cards))
        return [text for v in values for text in (v._repr_html_(), v._repr_markdown_())]

    bare = shown(None)
    for provider in ("plaid", "snaptrade", "manual"):
        texts = shown(provider)
        assert texts == bare, provider
        assert not [t for t in texts if "plaid" in t or "snaptrade" in t]
