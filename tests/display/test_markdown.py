"""The Markdown views: server text escaped, numbering and links as in the HTML views.

Markdown has no parser in the test dependencies, so the escaping is checked by
reading the text back: `read_back` undoes exactly the escapes a CommonMark
reader undoes, and fails on any character that reader could take as syntax.
"""

from __future__ import annotations

import re

import pytest

from silvia_client.citations import Citation
from silvia_client.display import citation_markdown, session_markdown, turn_markdown

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web

# What a CommonMark/GFM reader (with Jupyter's `$` math) could read as syntax.
SYNTAX = set("\\`*_{}[]()#+-.!|~=$<>&")
ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}

NASTY = [
    "**bold** _em_ `code` ~~strike~~",
    "[a link](javascript:alert(1)) ![img](x.png) <https://auto.example>",
    '<script>alert("x")</script> <b onclick=x>b</b> &amp; &lt;',
    "# heading",
    "1. a list",
    "- item",
    "+ item",
    "> a quote",
    "a | table | row",
    "costs $4,210.55 and $1,599.49",
    "back\\slash \\*not escaped\\*",
    "===",
    "{braces} and =equals=",
]


def read_back(markdown: str) -> str:
    """The text a Markdown reader shows for `markdown`, or AssertionError on live syntax."""
    out = []
    i = 0
    while i < len(markdown):
        char = markdown[i]
        if char == "\\":
            assert i + 1 < len(markdown), "a trailing backslash"
            assert markdown[i + 1] in SYNTAX, f"a needless escape at {i}"
            out.append(markdown[i + 1])
            i += 2
            continue
        if char == "&":
            entity = next((e for e in ENTITIES if markdown.startswith(e, i)), None)
            assert entity is not None, f"a bare & at {i}"
            out.append(ENTITIES[entity])
            i += len(entity)
            continue
        assert char not in SYNTAX, f"unescaped {char!r} at {i} in {markdown!r}"
        out.append(char)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("text", NASTY)
def test_answer_text_reads_back_exactly(text: str) -> None:
    assert read_back(turn_markdown(build_turn(text))) == text


@pytest.mark.parametrize("text", NASTY)
def test_titles_and_quotes_read_back_exactly(text: str) -> None:
    citation = Citation.model_validate(row("silvia://analysis", text, cited_text=text))
    label, quote = citation_markdown(citation).split("  \n   > ")
    assert label.startswith("**")
    assert label.endswith("**")
    assert read_back(label[2:-2]) == text
    assert read_back(quote) == text


def test_a_multiline_answer_keeps_its_lines_and_starts_no_block() -> None:
    text = "Line one\n    indented four\n\nNew paragraph"
    md = turn_markdown(build_turn(text))
    assert md == "Line one  \nindented four  \n  \nNew paragraph"


def test_the_whole_view_of_a_turn() -> None:
    turn = build_turn(
        "You have $10",
        row("silvia://your-account/checking", "Checking", account(), cited_text="balance: 10"),
        " and owe $5",
        row("silvia://your-account/credit-card", "Cards", accounts(ACCOUNT_A, ACCOUNT_B)),
        ". See this",
        row("https://e.example/a_(b)", "Rates (2024)", web("https://e.example/a_(b)")),
        ".",
    )
    assert turn_markdown(turn) == (
        f"You have \\$10<sup>[\\[1\\]](/accounts/{ACCOUNT_A})</sup>"
        " and owe \\$5<sup>\\[2\\]</sup>\\."
        " See this<sup>[\\[3\\]](https://e.example/a_%28b%29)</sup>\\.\n\n"
        "**Sources**\n\n"
        f"1. **Checking** — [Checking](/accounts/{ACCOUNT_A})  \n"
        "   > balance: 10\n"
        f"2. **Cards** — [Cards \\(1 of 2\\)](/accounts/{ACCOUNT_A}), "
        f"[Cards \\(2 of 2\\)](/accounts/{ACCOUNT_B})\n"
        "3. **Rates \\(2024\\)** — [Rates \\(2024\\)](https://e.example/a_%28b%29)"
    )


def test_chips_link_by_their_own_rows_and_the_list_by_the_final_target() -> None:
    source = "silvia://your-account/credit-card"
    one = row(source, "Cards", account(ACCOUNT_A), cited_text="one")
    both = row(source, "Cards", accounts(ACCOUNT_A, ACCOUNT_B), cited_text="both")
    turn = build_turn("a", one, " b", both, ".", summary=[{**one, "target": both["target"]}, both])
    assert turn_markdown(turn) == (
        f"a<sup>[\\[1\\]](/accounts/{ACCOUNT_A})</sup> b<sup>\\[1\\]</sup>\\.\n\n"
        "**Sources**\n\n"
        f"1. **Cards** — [Cards \\(1 of 2\\)](/accounts/{ACCOUNT_A}), "
        f"[Cards \\(2 of 2\\)](/accounts/{ACCOUNT_B})  \n"
        "   > one"
    )


def test_a_link_destination_cannot_be_ended_early() -> None:
    url = "https://e.example/x)y(z\\w<v>"
    turn = build_turn("a", row(url, "T", web(url)))
    destinations = re.findall(r"\]\(([^)]*)\)", turn_markdown(turn))
    assert destinations
    assert set(destinations) == {"https://e.example/x%29y%28z%5Cw%3Cv%3E"}


@pytest.mark.parametrize("source", ["javascript:alert(1)", "data:text/html,x", "vbscript:x"])
def test_a_script_source_is_never_a_link(source: str) -> None:
    md = turn_markdown(build_turn("a", row(source, None)))
    assert "](" not in md
    assert read_back(md.rsplit("1. **", 1)[1].removesuffix("**")) == source


def test_an_incomplete_turn_says_so() -> None:
    assert turn_markdown(build_turn("Half", done=False)).endswith("*Incomplete turn\\.*")
    failed = turn_markdown(build_turn("Half", error="over*loaded", done=False))
    assert failed.endswith("*Incomplete turn: over\\*loaded\\.*")
    assert not turn_markdown(build_turn("Done")).endswith("*")


def test_a_session_lists_its_messages_with_their_sources() -> None:
    session = build_session(
        [
            {"id": "m1", "role": "user", "content": "How much?"},
            {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "text", "text": "Ten."}],
                "citations": [row("silvia://your-account/checking", "Checking", account())],
            },
        ],
        title="# Title *x*",
    )
    assert session_markdown(session) == (
        "### \\# Title \\*x\\*\n\n**user**\n\nHow much?\n\n**assistant**\n\nTen\\.\n\n"
        f"1. **Checking** — [Checking](/accounts/{ACCOUNT_A})"
    )
