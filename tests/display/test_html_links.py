"""The HTML views' links: by target kind, never to a script, `web_url`, and no provider shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from silvia_client import ConfigurationError
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
from silvia_client.display._html import KIND_NAMES

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web
from ._dom import parse, sources

# Links ------------------------------------------------------------------------------------


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


def test_each_kind_has_its_badge_and_links_that_say_what_they_open() -> None:
    cited = [row(f"silvia://{kind}", kind.title(), target) for kind, target in TARGETS.items()]
    cited.append(row("https://legacy.example/page", "Old page"))  # untyped: the source links
    html = turn_html(build_turn(*[piece for c in cited for piece in ("x ", c)]))
    items = parse(html).find("ol", "silvia-sources").find_all("li")
    assert [li.find("span", "silvia-badge").text for li in items] == [
        *KIND_NAMES.values(),
        "Untyped",
    ]
    assert len({li.find("span", "silvia-badge").attrs["class"] for li in items}) == len(items)
    links = {label: found for _, label, found in sources(html)}
    assert links == {
        "Web": [("https://e.example/a?b=1&c=2", "Open page")],
        "Tax_Reference": [("https://irs.example/p590", "Open document")],
        "Card_Document": [],  # url null: nothing to open
        "Mortgage_Reference": [("https://cfpb.example/x", "Open document")],
        "AAPL": [],
        "Analysis": [],
        "Account": [(f"/accounts/{ACCOUNT_A}", "Open account")],
        "Accounts": [
            (f"/accounts/{ACCOUNT_A}", "Open account (1 of 2)"),
            (f"/accounts/{ACCOUNT_B}", "Open account (2 of 2)"),
        ],
        "Portfolio": [],
        "Old page": [("https://legacy.example/page", "Open page")],
    }


def test_a_script_source_or_target_never_becomes_a_link() -> None:
    for source in ["javascript:alert(document.cookie)", "JaVaScRiPt:alert(1)", "data:text/html,x"]:
        html = turn_html(build_turn("Hi", row(source, None)))
        assert parse(html).find_all("a") == [], source
        assert [label for _, label, _ in sources(html)] == [source]  # shown, as text
    citation = Citation(source="x", title="X", target=WebTarget("javascript:alert(1)"))
    assert parse(citation_html(citation)).find_all("a") == []


def test_web_url_else_silvia_web_url_makes_account_links_absolute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    turn = build_turn("a", row("silvia://your-account/checking", "Checking", target=account()))
    absolute = [(f"https://app.example/accounts/{ACCOUNT_A}", "Open account")]
    assert sources(turn_html(turn, web_url="https://app.example"))[0][2] == absolute
    monkeypatch.setenv("SILVIA_WEB_URL", "https://app.example")
    for html in (turn._repr_html_(), turn_html(turn)):
        assert sources(html)[0][2] == absolute
    markdown_link = f"[Open account](https://app.example/accounts/{ACCOUNT_A})"
    assert markdown_link in turn_markdown(turn)
    assert markdown_link in turn._repr_markdown_()
    assert f"[Open account](/accounts/{ACCOUNT_A})" in turn_markdown(turn, web_url="")
    # "": the app's own paths
    assert sources(turn_html(turn, web_url=""))[0][2] == [
        (f"/accounts/{ACCOUNT_A}", "Open account")
    ]
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


def test_base_url_is_a_deprecated_alias_of_web_url() -> None:
    web = "https://app.example"
    for view, shown in _views():
        with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
            old = view(shown, base_url=web)
        assert old == view(shown, web_url=web), view
        assert f"{web}/accounts/{ACCOUNT_A}" in str(old), view
        assert [w.filename for w in caught] == [__file__], view  # one, at the caller's line
        with pytest.raises(TypeError, match="web_url= only"):
            view(shown, web_url=web, base_url=web)
    citation = Citation.model_validate(row("s", "Checking", account()))
    [shown] = numbered_sources([], [citation], web_url=web)
    assert shown.resolved.href == f"{web}/accounts/{ACCOUNT_A}"
    with pytest.warns(DeprecationWarning, match="pass web_url="):
        [old] = numbered_sources([], [citation], base_url=web)
    assert old.resolved == shown.resolved


def test_a_citation_shows_label_links_and_quote() -> None:
    citation = Citation.model_validate(
        row(
            "silvia://your-account/checking",
            "Checking",
            account(),
            cited_text="balance: 10, name: C",
        )
    )
    tree = parse(citation._repr_html_())
    box = tree.find("div", "silvia-citation")
    assert box.find("span", "silvia-label").text == "Checking"
    assert [a.attrs["href"] for a in box.find_all("a")] == [f"/accounts/{ACCOUNT_A}"]
    kv = box.find("dl", "silvia-kv")  # a `key: value` quote is a key/value list
    assert [(n.tag, n.text) for n in kv.children if not isinstance(n, str)] == [
        ("dt", "balance"),
        ("dd", "10"),
        ("dt", "name"),
        ("dd", "C"),
    ]
    assert box.find("span", "silvia-badge").text == "Account"
    assert box.find("a").attrs["title"] == "Checking"  # the label, as the link's title


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


def test_the_provider_changes_nothing_shown() -> None:
    bare_turn, bare_session, bare_citation = _with_provider(None)
    for provider in ("plaid", "snaptrade", "manual"):
        turn, session, citation = _with_provider(provider)
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
