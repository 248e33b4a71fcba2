"""The server's final word on each source of a turn: what `target_for` answers, live and reloaded.

The one-meaning-per-source registry is the server's and every row is read as
sent, so a source's final target is read off the rows, not worked out again. A
turn resumed from a checkpoint written before targets existed can stream a
source untyped and then typed: this says where it ended.

`final_targets` is the rule; `FinalTargets`, the `target_for` that `Turn` and
`Message` share, with its cache. Apart from `_rows.py`: it only reads attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._targets import CitationTarget, TargetedRow


def final_targets(
    streamed: Iterable[TargetedRow], summary: Iterable[TargetedRow]
) -> dict[str, CitationTarget | None]:
    """Each cited source's final target, the sources in order of first appearance.

    The order is the streamed rows', then sources only the summary names. A
    source whose final row has no target maps to None.
    """
    targets = {row.source: row.target for row in streamed}  # the last streamed row wins
    for row in summary:
        targets[row.source] = row.target  # the summary over the stream; its last row wins
    return targets


class FinalTargets:
    """`target_for`, for a frozen value holding a turn's rows: a `Turn`, a `Message`.

    The value declares `citations`, `inline_citations` and `_targets`, an empty
    dict of its own, filled off the rows on first use and then kept.
    """

    __slots__ = ()

    citations: Sequence[TargetedRow]
    inline_citations: Sequence[TargetedRow]
    _targets: dict[str, CitationTarget | None]

    def _final_targets(self) -> dict[str, CitationTarget | None]:
        if not self._targets:  # filled in place: the frozen value is never reassigned
            self._targets.update(final_targets(self.inline_citations, self.citations))
        return self._targets

    def target_for(self, source: str) -> CitationTarget | None:
        """The server's final word on `source`: its target in the summary, else its last streamed.

        That is its last row in `citations`, else its last in `inline_citations`;
        None when that row is untyped, or `source` was never cited.
        """
        return self._final_targets().get(source)
