"""`display` reads what it renders through its protocols (`_protocols.py`) and imports no model.

The models' notebook hooks import `display`, so an import of a model from
`display` (even under `TYPE_CHECKING`, which import-linter counts) is a cycle.
Held here three ways: the imports written in `display/*.py`, the modules those
reach (grimp, as import-linter sees them), and plain values with the protocols'
attributes rendering exactly as the models do.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import grimp
import pytest

import silvia_client.display
from silvia_client.citations import CitationTarget
from silvia_client.display import (
    citation_html,
    citation_markdown,
    message_html,
    message_markdown,
    session_html,
    session_markdown,
    turn_html,
    turn_markdown,
)
from silvia_client.display._protocols import (
    CitedRow,
    MessageLike,
    SessionLike,
    StreamedRow,
    TurnLike,
)

from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web

DISPLAY = Path(silvia_client.display.__file__).parent

# The ground floor display may import from: no model, at run time or for mypy.
GROUND_FLOOR = frozenset(
    {
        "silvia_client._text",  # the bidi rule, the cleaners, the scrubber: stdlib only
        "silvia_client._errors_root",  # `ConfigurationError`: it imports nothing
        "silvia_client.citations._final",
        "silvia_client.citations._links",
        "silvia_client.citations._targets",
    }
)

# The models, and the packages whose `__init__` loads them.
MODELS = (
    "silvia_client.citations",
    "silvia_client.citations._rows",
    "silvia_client.chat",
    "silvia_client.chat._turn",
    "silvia_client.sessions",
    "silvia_client.sessions._history",
)


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (functions, `TYPE_CHECKING`), absolute."""
    package = "silvia_client.display"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            out.add(module)
    return out


@pytest.mark.parametrize("path", sorted(DISPLAY.glob("*.py")), ids=lambda p: p.name)
def test_display_imports_only_itself_and_the_ground_floor(path: Path) -> None:
    ours = {m for m in _imported(path) if m.split(".")[0] == "silvia_client"}
    outside = {m for m in ours if not m.startswith("silvia_client.display")}
    assert outside <= GROUND_FLOOR, f"{path.name} imports {sorted(outside - GROUND_FLOOR)}"


def test_display_reaches_no_model() -> None:
    graph = grimp.build_graph("silvia_client", include_external_packages=False, cache_dir=None)
    display = sorted(m for m in graph.modules if m.startswith("silvia_client.display"))
    chains = {
        (importer, model): graph.find_shortest_chain(importer=importer, imported=model)
        for importer in display
        for model in MODELS
        if model in graph.modules
    }
    assert {pair: chain for pair, chain in chains.items() if chain is not None} == {}


# Plain values with the protocols' attributes and nothing else.


@dataclass(frozen=True)
class Row:
    source: str
    title: str | None
    cited_text: str | None
    target: CitationTarget | None


@dataclass(frozen=True)
class Streamed(Row):
    offset: int | None


@dataclass(frozen=True)
class Failure:
    message: str


@dataclass(frozen=True)
class PlainTurn:
    text: str
    citations: tuple[CitedRow, ...]
    inline_citations: tuple[StreamedRow, ...]
    complete: bool
    error: Failure | None


@dataclass(frozen=True)
class PlainMessage:
    role: str | None
    text: str
    citations: tuple[CitedRow, ...]
    inline_citations: tuple[StreamedRow, ...]


@dataclass(frozen=True)
class PlainSession:
    id: str
    title: str | None
    messages: tuple[MessageLike, ...]


def _row(c: CitedRow) -> Row:
    return Row(c.source, c.title, c.cited_text, c.target)


def _streamed(c: StreamedRow) -> Streamed:
    return Streamed(c.source, c.title, c.cited_text, c.target, c.offset)


def _turn(t: TurnLike) -> PlainTurn:
    error = Failure(t.error.message) if t.error is not None else None
    return PlainTurn(
        t.text,
        tuple(map(_row, t.citations)),
        tuple(map(_streamed, t.inline_citations)),
        t.complete,
        error,
    )


def _message(m: MessageLike) -> PlainMessage:
    return PlainMessage(
        m.role, m.text, tuple(map(_row, m.citations)), tuple(map(_streamed, m.inline_citations))
    )


def _session(s: SessionLike) -> PlainSession:
    return PlainSession(s.id, s.title, tuple(map(_message, s.messages)))


@pytest.mark.parametrize("web_url", ["", "https://app.example"])
def test_plain_values_render_as_the_models_do(web_url: str) -> None:
    turn = build_turn(
        "Balances <b>$1</b> ",
        row("s1", "Checking", account(), cited_text="  $1,000\n today"),
        row("https://w.example/a?b=(c)", "Web", web("https://w.example/a?b=(c)")),
        "and pooled",
        row("s1", "Checking", accounts(ACCOUNT_A, ACCOUNT_B)),
        summary=[row("s1", "Checking", accounts(ACCOUNT_A, ACCOUNT_B)), row("s2", None)],
        done=False,
        error="cut <off>",
    )
    plain = _turn(turn)
    assert turn_html(plain, web_url=web_url) == turn_html(turn, web_url=web_url)
    assert turn_markdown(plain, web_url=web_url) == turn_markdown(turn, web_url=web_url)
    for model, value in zip(turn.inline_citations, plain.inline_citations, strict=True):
        assert citation_html(value, web_url=web_url) == citation_html(model, web_url=web_url)
        assert citation_markdown(value, web_url=web_url) == citation_markdown(
            model, web_url=web_url
        )
    session = build_session(
        [
            {"id": "m1", "role": "user", "content": "Hi"},
            {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "text", "text": "Here"}],
                "citations": [row("s1", "Checking", account())],
                "inline_citations": [{**row("s1", "Checking", account()), "offset": 4}],
            },
        ]
    )
    plain_session = _session(session)
    assert session_html(plain_session, web_url=web_url) == session_html(session, web_url=web_url)
    assert session_markdown(plain_session, web_url=web_url) == session_markdown(
        session, web_url=web_url
    )
    for model_message, value_message in zip(session.messages, plain_session.messages, strict=True):
        assert message_html(value_message, web_url=web_url) == message_html(
            model_message, web_url=web_url
        )
        assert message_markdown(value_message, web_url=web_url) == message_markdown(
            model_message, web_url=web_url
        )
