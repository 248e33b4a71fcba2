"""The Markdown views: server text escaped, numbering and links as in the HTML views.

`read_back` undoes exactly the escapes a CommonMark reader undoes and fails on anything it
could read as syntax; two real readers (`_dom.READERS`) must find the HTML views' links.
"""

from __future__ import annotations

from urllib.parse import unquote

from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client.citations import Citation, is_http_url
from silvia_client.display import citation_markdown, session_markdown, turn_html, turn_markdown

from ..citations.strategies import PROPERTY
from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web
from ._dom import READERS, parse

# What a CommonMark/GFM reader (with Jupyter's `$` math) could read as syntax.
SYNTAX = set("\\`*_{}[]()#+-.!|~=$<>&")
ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}

NASTY = [
    "**bold** _em_ `code` ~~strike~~",
    "[a link](javascript:alert(1)) ![img](x.png) <https://auto.example>",
    *('<script>alert("x")</script> <b onclick=x>b</b> &amp; &lt;', "# heading", "1. a list"),
    *("- item", "+ item", "> a quote", "a | table | row", "costs $4,210.55 and $1,599.49"),
    *("back\\slash \\*not escaped\\*", "===", "{braces} and =equals="),
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


def test_answer_text_titles_and_quotes_read_back_exactly() -> None:
    for text in NASTY:
        assert read_back(turn_markdown(build_turn(text))) == text, text
        citation = Citation.model_validate(row("silvia://analysis", text, cited_text=text))
        label, quote = citation_markdown(citation).split("  \n   > ")
        assert label.startswith("**"), text
        assert label.endswith("**"), text
        assert read_back(label[2:-2]) == text, text
        assert read_back(quote) == text, text


def test_the_whole_view_of_a_turn_chips_by_their_own_rows_the_list_by_the_final_target() -> None:
    cards = "silvia://your-account/credit-card"
    checking = row(
        "silvia://your-account/checking", "Checking", account(), cited_text="balance: 10"
    )
    both = row(cards, "Cards", accounts(ACCOUNT_A, ACCOUNT_B))
    rates = row("https://e.example/a_(b)", "Rates (2024)", web("https://e.example/a_(b)"))
    later = row("silvia://your-portfolio", "Holdings", {"kind": "portfolio"})
    # Numbered as first streamed, whatever the summary's order; a source it alone names, last.
    turn = build_turn(
        "You have $10", checking, " and owe $5", row(cards, "Cards", account(ACCOUNT_A)),
        " on two cards", both, ". See this", rates, ".", summary=[rates, later, both, checking],
    )  # fmt: skip
    assert turn_markdown(turn) == (
        f"You have \\$10<sup>[\\[1\\]](/accounts/{ACCOUNT_A})</sup>"
        f" and owe \\$5<sup>[\\[2\\]](/accounts/{ACCOUNT_A})</sup>"
        " on two cards<sup>\\[2\\]</sup>\\."
        " See this<sup>[\\[3\\]](https://e.example/a_%28b%29)</sup>\\.\n\n"
        "**Sources**\n\n"
        f"1. **Checking** — [Open account](/accounts/{ACCOUNT_A})  \n"
        "   > balance: 10\n"
        f"2. **Cards** — [Open account \\(1 of 2\\)](/accounts/{ACCOUNT_A}), "
        f"[Open account \\(2 of 2\\)](/accounts/{ACCOUNT_B})\n"
        "3. **Rates \\(2024\\)** — [Open page](https://e.example/a_%28b%29)\n"
        "4. **Holdings**"
    )


def test_lines_stay_lines_and_an_incomplete_turn_says_so() -> None:
    md = turn_markdown(build_turn("Line one\n    indented four\n\nNew paragraph"))
    assert md == "Line one  \nindented four  \n  \nNew paragraph"  # and no code block
    assert turn_markdown(build_turn("Half", done=False)).endswith("*Incomplete turn\\.*")
    failed = turn_markdown(build_turn("Half", error="over*loaded", done=False))
    assert failed.endswith("*Incomplete turn: over\\*loaded\\.*")
    assert not turn_markdown(build_turn("Done")).endswith("*")


def test_a_session_lists_its_messages_with_their_sources() -> None:
    answer = {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Ten."}]}
    cited = [row("silvia://your-account/checking", "Checking", account())]
    session = build_session(
        [{"id": "m1", "role": "user", "content": "How much?"}, {**answer, "citations": cited}],
        title="# Title *x*",
    )
    assert session_markdown(session) == (
        "### \\# Title \\*x\\*\n\n**user**\n\nHow much?\n\n**assistant**\n\nTen\\.\n\n"
        f"1. **Checking** — [Open account](/accounts/{ACCOUNT_A})"
    )


# Link destinations, read by real readers ---------------------------------------------


def links(html: str) -> list[tuple[str, str]]:
    """(href, text) of every link in `html`, attribute entities decoded as a browser does."""
    return [(a.attrs.get("href") or "", a.text) for a in parse(html).find_all("a")]


_DESTINATION_SPECIALS = "'\"()<>`\\[]{}|^&;%$#?@!*+,=:~/._-"
_url_paths = st.text(
    alphabet=st.one_of(
        st.sampled_from(_DESTINATION_SPECIALS),
        st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Zs", "Zl", "Zp", "Cs")),
    ),
    max_size=30,
)
http_urls = st.builds(
    lambda scheme, host, path: f"{scheme}://{host}/{path}",
    st.sampled_from(["http", "https", "HTTPS"]),
    st.from_regex(
        r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z]{2,6}){0,2}(:[0-9]{1,5})?", fullmatch=True
    ),
    _url_paths,
).filter(is_http_url)
linked_account_ids = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30).filter(
    lambda value: value not in (".", "..")
)


@PROPERTY
@given(linked_account_ids, st.sampled_from(["", "https://app.example/"]))
@example("a'b'", "")
@example('a"b"', "")
@example("a b", "")
@example("a(b)c", "")
@example("a<b>c", "")
@example("a`b`c", "")
def test_any_account_link_reads_back_to_its_id_in_both_readers(
    account_id: str, web_url: str
) -> None:
    citation = Citation.model_validate(row("s", "Account", account(account_id)))
    md = citation_markdown(citation, web_url=web_url)
    origin = web_url.rstrip("/")
    for reader in READERS.values():
        [(href, text)] = links(reader(md))
        assert href.startswith(f"{origin}/accounts/")
        assert unquote(href.removeprefix(f"{origin}/accounts/"), errors="strict") == account_id
        assert text == "Open account"


@PROPERTY
@given(http_urls)
@example("https://e.example/a'b'")
@example('https://e.example/a"b""t"')
@example("https://e.example/x)y(z\\w<v>")
@example("https://e.example/`code`/x`")
@example("https://e.example/?a=1&b=2&lt;&amp;&#39;&#x27;")
@example("https://e.example/[a](b)*c*_d_")
@example("https://e.example/é/中/😀")
def test_any_http_url_reads_back_whole_in_both_readers(url: str) -> None:
    target = Citation.model_validate(row("s", "Doc", web(url)))
    legacy = Citation.model_validate(row(url, "Doc"))
    # Between two links, a backtick in each would make a code span of what lies between.
    turn = build_turn("a", row(url, "A", web(url)), " b", row(url + "2", "B", web(url + "2")))
    for reader in READERS.values():
        for citation in (target, legacy):
            [(href, text)] = links(reader(citation_markdown(citation)))
            assert unquote(href) == unquote(url)
            assert text == "Open page"
        # A reader may percent-encode more than the view did (markdown-it encodes non-ASCII);
        # what must not change is the URL it decodes to.
        read = [(unquote(href), text) for href, text in links(reader(turn_markdown(turn)))]
        assert read == [(unquote(href), text) for href, text in links(turn_html(turn))]
