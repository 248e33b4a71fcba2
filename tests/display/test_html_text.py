"""The HTML views as text: server markup escaped, line breaks, the incomplete-turn note, hooks."""

from __future__ import annotations

from silvia_client.display import citation_html, message_html, session_html, turn_html

from ._build import account, build_session, build_turn, row, web
from ._dom import answer, answer_text, parse, sources

SCRIPT = '<script>alert("x")</script>'


# Escaping -------------------------------------------------------------------------------


# The views' own elements: anything else in a view came from the server, and must not.
VIEW_TAGS = {
    *("#root", "div", "p", "sup", "a", "ol", "li", "span", "br", "q", "strong", "style"),
    *("details", "summary", "dl", "dt", "dd", "em", "h3"),
}


def test_server_text_in_titles_quotes_and_answers_shows_as_text() -> None:
    for markup in (
        SCRIPT,
        "<b>b</b> & <i>co</i>",
        "<img src=x onerror=alert(1)>",
        "&lt;a&gt; &amp;",
    ):
        turn = build_turn(
            f"Answer {markup} here",
            row(f"https://example.com/{markup[:3]}", title=f"Title {markup}", cited_text=markup),
        )
        html = turn_html(turn)
        tree = parse(html)
        # Only the view's own elements: nothing the server sent became an element.
        assert tree.tags() <= VIEW_TAGS, markup
        assert answer_text(html) == f"Answer {markup} here"
        [(_, label, _)] = sources(html)
        assert label == f"Title {markup}"
        assert tree.find("q", "silvia-quote").text == markup
        assert tree.find("sup", "silvia-chip").attrs["title"] == f"Title {markup}"


def test_a_quote_in_a_url_or_an_account_id_stays_inside_the_href() -> None:
    url = 'https://example.com/a"onmouseover="alert(1)&b=<c>'
    anchors = parse(turn_html(build_turn("See", row(url, "Page", target=web(url))))).find_all("a")
    assert anchors, "a web target is a link"
    for anchor in anchors:
        assert anchor.attrs["href"] == url
        assert set(anchor.attrs) <= {"href", "target", "rel", "title"}
    odd = 'id"with<markup>&spaces here'
    turn = build_turn("Balance", row("silvia://your-account/odd", "Odd", target=account(odd)))
    [(_, _, links)] = sources(turn_html(turn))
    assert links == [("/accounts/id%22with%3Cmarkup%3E%26spaces%20here", "Open account")]


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


def test_dollar_signs_are_not_math_and_line_breaks_are_kept() -> None:
    turn = build_turn("$4,210.55 in checking\nand $1,599.49 owed")
    root = parse(turn_html(turn)).find("div", "silvia-turn")
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set((root.attrs["class"] or "").split())
    children = answer(turn_html(turn)).children
    assert [c if isinstance(c, str) else c.tag for c in children] == [
        "$4,210.55 in checking",
        "br",
        "\nand $1,599.49 owed",
    ]


# The incomplete-turn note ---------------------------------------------------------------


def test_an_incomplete_turn_says_so_and_gives_the_servers_reason_escaped() -> None:
    assert parse(turn_html(build_turn("Done."))).find_all("p", "silvia-note") == []
    assert parse(turn_html(build_turn("Half", done=False))).find("p", "silvia-note").text == (
        "Incomplete turn."
    )
    tree = parse(turn_html(build_turn("Half", error=f"overloaded {SCRIPT}", done=False)))
    assert "script" not in tree.tags()
    assert tree.find("p", "silvia-note").text == f"Incomplete turn: overloaded {SCRIPT}."


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
