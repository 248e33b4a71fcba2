"""The words of a scripted turn: tool results (`_tools`), what the model says, what it cites.

Where things are: `Say` and `Cite` (in the order things happen), `Checkpoint`, `PriorTurn`;
a `Cite` whose source the turn's tool results did not write is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from ._tools import ToolResult

__all__ = ["Checkpoint", "Cite", "PriorTurn", "Say", "ScriptItem"]


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
