"""A scripted turn: what the model's tools returned, what it says, what it cites.

Where things are: first the tool results, the inputs of `_derive`'s rules, one
class per row of the doc's source table (`execute_sql`, `execute_python`, the
three library readers with their sidecar, `search_web`); then `Say` and `Cite`
(in the order things happen), `Checkpoint`, `PriorTurn`. A `Cite` whose source
the turn's tool results did not write is rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

Row: TypeAlias = Mapping[str, object]


@dataclass(frozen=True)
class ExecuteSql:
    """An `execute_sql` result: the rows, with whichever columns the model selected.

    Rows are grouped by `label_column` into one `silvia://your-account/<slug>`
    source per label. With `label_column=None` the result is portfolio-wide and
    becomes the single `silvia://your-portfolio` source.
    """

    rows: tuple[Row, ...]
    label_column: str | None = "account_name"
    portfolio_title: str = "Your portfolio"

    def __post_init__(self) -> None:
        # Accept any sequence of mappings, keep an immutable tuple.
        object.__setattr__(self, "rows", tuple(self.rows))


@dataclass(frozen=True)
class ExaArticle:
    """An article fetched through Exa inside `execute_python`: cited by its own URL."""

    url: str
    title: str
    text: str


@dataclass(frozen=True)
class ExecutePython:
    """An `execute_python` run: the code the model wrote and what it printed.

    Finnhub is recognised in the code or the payload, as the doc says. A
    payload printed as a JSON object (or list of objects) with a `symbol` or
    `ticker` field is "printed with its ticker".
    """

    code: str
    output: str
    title: str = "Analysis"
    articles: tuple[ExaArticle, ...] = ()


LibraryTool: TypeAlias = Literal[
    "read_tax_authority", "read_credit_card_document", "read_mortgage_authority"
]
LIBRARY_TOOLS: tuple[LibraryTool, ...] = get_args(LibraryTool)


@dataclass(frozen=True)
class ReadLibraryDocument:
    """One of the three library readers returning a file and its `.meta.json` sidecar."""

    tool: LibraryTool
    path: str
    text: str
    sidecar: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tool not in LIBRARY_TOOLS:
            raise ValueError(f"not a library reader: {self.tool!r}")


def _reader(
    tool: LibraryTool, path: str, text: str, source_url: str | None, title: str | None
) -> ReadLibraryDocument:
    sidecar = {"title": title, "source_url": source_url}
    return ReadLibraryDocument(
        tool, path, text, {k: v for k, v in sidecar.items() if v is not None}
    )


def read_tax_authority(
    path: str, text: str, *, source_url: str | None = None, title: str | None = None
) -> ReadLibraryDocument:
    """A `read_tax_authority` result; no `source_url` means the sidecar had none."""
    return _reader("read_tax_authority", path, text, source_url, title)


def read_credit_card_document(
    path: str, text: str, *, source_url: str | None = None, title: str | None = None
) -> ReadLibraryDocument:
    """A `read_credit_card_document` result; no `source_url` means the sidecar had none."""
    return _reader("read_credit_card_document", path, text, source_url, title)


def read_mortgage_authority(
    path: str, text: str, *, source_url: str | None = None, title: str | None = None
) -> ReadLibraryDocument:
    """A `read_mortgage_authority` result; no `source_url` means the sidecar had none."""
    return _reader("read_mortgage_authority", path, text, source_url, title)


@dataclass(frozen=True)
class WebResult:
    """One `search_web` result; `url=None` for an answer the search service wrote itself."""

    title: str
    text: str
    url: str | None = None


@dataclass(frozen=True)
class SearchWeb:
    """A `search_web` call and its results."""

    query: str
    results: tuple[WebResult, ...]


ToolResult: TypeAlias = ExecuteSql | ExecutePython | ReadLibraryDocument | SearchWeb


@dataclass(frozen=True)
class Say:
    """Text the model writes; streamed as several `text` deltas."""

    text: str


@dataclass(frozen=True)
class Cite:
    """The model cites content blocks `[start, end)` of the latest result written to `source`."""

    source: str
    start: int = 0
    end: int | None = None  # exclusive, as Anthropic's end_block_index; default start + 1

    @property
    def block_range(self) -> tuple[int, int]:
        return self.start, self.start + 1 if self.end is None else self.end


ScriptItem: TypeAlias = ToolResult | Say | Cite


@dataclass(frozen=True)
class Checkpoint:
    """The turn resumes from a slice checkpoint holding these earlier tool calls.

    `carries_targets=True` is a checkpoint with its registry (`citationTargets`),
    so those sources keep their targets. `False` is a checkpoint written before
    targets existed: the registry starts empty and its sources stream untyped.
    """

    tool_calls: tuple[ToolResult, ...]
    carries_targets: bool = False


@dataclass(frozen=True)
class PriorTurn:
    """A turn already saved in the session before this one.

    `legacy=True` stores it as rows saved before targets existed: no `target`
    key anywhere in its citations.
    """

    message: str
    script: tuple[ScriptItem, ...]
    legacy: bool = True
