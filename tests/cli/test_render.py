"""The terminal rendering the commands share: markers, sources, hyperlinks, control characters."""

from __future__ import annotations

import fcntl
import io
import os
import struct
import termios
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from silvia_client._text import terminal_text as clean  # what the renderer cleans with
from silvia_client.chat.events import ChatEvent, CitationEvent, TextEvent
from silvia_client.citations import Citation, InlineCitation
from silvia_client.cli._render import TerminalRenderer, hyperlink, supports_hyperlinks

from ..citations.strategies import PROPERTY
from ._cli import Tty

ACCOUNT = "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"
ESC = "\x1b"


def inline(source: str, offset: int, **row: Any) -> InlineCitation:
    return InlineCitation.model_validate({"source": source, **row, "offset": offset})


def web(url: str, title: str = "Page") -> Citation:
    return Citation.model_validate(
        {"source": url, "title": title, "target": {"kind": "web", "url": url}}
    )


def test_hyperlinks_are_osc_8_only_on_a_capable_terminal_for_sources() -> None:
    for tty, env, expected in [
        (True, {"TERM": "xterm-256color"}, True),
        (True, {}, True),
        (True, {"TERM": "dumb"}, False),
        (True, {"TERM": "xterm", "NO_COLOR": "1"}, False),
        (True, {"TERM": "xterm", "NO_COLOR": ""}, True),  # no-color.org: set and not empty
        (False, {"TERM": "xterm"}, False),
    ]:
        assert supports_hyperlinks(Tty() if tty else io.StringIO(), env) is expected, (tty, env)
    assert supports_hyperlinks(object(), {"TERM": "xterm"}) is False  # type: ignore[arg-type]
    assert TerminalRenderer(io.StringIO()).links is False
    assert hyperlink("https://e.example/a", "text") == (
        f"{ESC}]8;;https://e.example/a{ESC}\\text{ESC}]8;;{ESC}\\"
    )
    out = Tty()
    render = TerminalRenderer(out, links=True)
    account = Citation.model_validate(
        {
            "source": "silvia://your-account/checking",
            "title": "Checking",
            "target": {"kind": "account", "accountId": ACCOUNT, "provider": "plaid"},
        }
    )
    render.sources([], [web("https://e.example/a"), account])
    assert out.getvalue().splitlines()[2:] == [
        "  [1] Page (web page)",
        "      " + hyperlink("https://e.example/a", "https://e.example/a"),
        "  [2] Checking (your account)",
        f"      /accounts/{ACCOUNT}",  # a relative path is no terminal link
    ]
    absolute = Tty()
    TerminalRenderer(absolute, links=True, web_url="https://app.example").sources([], [account])
    link = f"https://app.example/accounts/{ACCOUNT}"
    assert absolute.getvalue().splitlines()[-1] == "      " + hyperlink(link, link)


def test_server_text_cannot_drive_or_reorder_the_terminal() -> None:
    # What the cleaner writes for each character: tests/test_text.py.
    evil = f"a{ESC}]8;;https://evil.example{ESC}\\b{ESC}[2J\rc\x07d\x9be\tf\ng"
    url = "https://e.example/"
    out = Tty()
    render = TerminalRenderer(out, links=True)
    render.event(TextEvent(evil + "\u2066"))
    render.event(CitationEvent(inline(url, len(evil), title=f"T{ESC}[31m")))
    render.sources(
        [inline(url, len(evil), title=f"T{ESC}[31m\u202e")],
        [web(url, title=f"T{ESC}[31m\u202bred")],
    )
    render.answer("Stored\u2069.", [inline(url, 6)])
    written = out.getvalue()
    # The only escapes are the renderer's own hyperlink's four; no bidi control is left.
    assert written.count(ESC) == 4
    assert not set("\u202b\u202e\u2066\u2069") & set(written)
    assert written.startswith(clean(evil) + "[1]")
    assert "  [1] T\\x1b[31mred (web page)" in written
    assert "Stored[1].\n" in written


def test_markers_one_per_source_at_each_place_live_and_at_offsets() -> None:
    out = io.StringIO()
    render = TerminalRenderer(out, links=False)
    events: list[ChatEvent] = [TextEvent("One")]
    events += [CitationEvent(inline(source, 3)) for source in "aba"]
    events += [TextEvent(" two"), CitationEvent(inline("a", 7)), CitationEvent(inline("c", 7))]
    for event in events:
        render.event(event)
    assert out.getvalue() == "One[1][2] two[1][3]"
    assert render.numbers == {"a": 1, "b": 2, "c": 3}
    out = io.StringIO()
    rows = [inline("a", 3), inline("b", 3), inline("a", 7)]
    TerminalRenderer(out, links=False).answer("One two.", rows)
    assert out.getvalue() == "One[1][2] two[1].\n"


def test_sources_show_each_sources_final_target_and_never_its_provider() -> None:
    def shown(provider: str | None) -> str:
        one = {"kind": "account", "accountId": ACCOUNT, "provider": provider}
        refs = [{"accountId": ACCOUNT, "provider": provider}, {"accountId": ACCOUNT[::-1]}]
        cards = "silvia://your-account/cards"
        rows = [
            inline(cards, 3, title="Cards", target=one),
            inline(cards, 7, title="Cards", target={"kind": "accounts", "accounts": refs}),
        ]
        out = io.StringIO()
        render = TerminalRenderer(out, links=False)
        render.answer("One two.", rows)
        render.sources(rows, [])  # no summary: the last streamed row is the final word
        return out.getvalue()

    assert shown(None).splitlines()[:4] == [
        "One[1] two[1].",
        "",
        "Sources",
        "  [1] Cards (2 of your accounts)",
    ]
    assert shown("plaid") == shown("snaptrade") == shown(None)


@PROPERTY  # no health check on a loaded machine, no deadline
@given(
    pieces=st.lists(st.text(alphabet="ab c\n", max_size=12), max_size=30),
    width=st.integers(min_value=4, max_value=30),
)
def test_a_streamed_answer_wraps_at_spaces_never_inside_a_word(
    pieces: list[str], width: int
) -> None:
    out = io.StringIO()
    render = TerminalRenderer(out, links=False, width=width)
    for piece in pieces:  # pieces break words anywhere, as a model's deltas do
        render.event(TextEvent(piece))
    render.end_line()
    text = "".join(pieces)
    assert out.getvalue().split() == text.split()  # every word whole, in order
    for line in out.getvalue().split("\n"):
        assert len(line) <= width or " " not in line  # only a lone long word passes the width
    assert out.getvalue().count("\n") >= text.count("\n")  # the answer's own line breaks kept


def test_a_terminal_wraps_the_answer_a_pipe_or_a_terminal_of_no_width_does_not() -> None:
    words = ("I moved part of it into your IRAs " * 10).rstrip()
    piped = io.StringIO()
    TerminalRenderer(piped).event(TextEvent(words))
    assert piped.getvalue() == words  # a file or a pipe gets the text as it came
    terminal = Tty()
    render = TerminalRenderer(terminal, width=40)
    render.event(TextEvent(words))
    render.event(CitationEvent(inline("https://e.example/", len(words))))
    render.end_line()
    lines = terminal.getvalue().splitlines()
    assert len(lines) > 5
    assert all(len(line) <= 40 for line in lines)
    assert terminal.getvalue().split() == [*words.split()[:-1], "IRAs[1]"]
    # A new pseudo-terminal says it has 0 columns: wrapping there would break every line.
    main, side = os.openpty()
    try:
        with os.fdopen(side, "w", closefd=False) as out:
            assert TerminalRenderer(out).width is None
            fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))
            assert TerminalRenderer(out).width == 59
    finally:
        os.close(main)
        os.close(side)
