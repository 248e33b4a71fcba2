"""The server's final word on each source of a turn: what `target_for` answers, live and reloaded.

The one-meaning-per-source registry is the server's: it writes every row's
`target` from it, and the SDK reads each row as sent. So a source's final
target is read off the rows, not worked out again: the summary's (its last row
for the source, should the summary name one source twice with different
targets), else that of the source's last streamed row. A turn resumed from a
checkpoint written before targets existed can stream a source untyped and then
typed; its rows keep what the server sent, and this says where it ended.

Where things are: `final_targets`, the rule; `FinalTargets`, the `target_for`
that `Turn` and `Message` share, with its cache. Kept apart from `_rows.py`
(the pydantic models): it only reads attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._targets import CitationTarget, TargetedRow

__all__ = ["FinalTargets", "final_targets"]


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

    The value declares `citations` (the summary's rows), `inline_citations` (the
    streamed ones) and a `_targets` field, an empty dict of its own: the final
    targets are read off the rows into it on first use, then kept (a value
    without citations reads its none each time, at no cost).
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

        That is its last row in `citations`, else its last row in
        `inline_citations`. None when that row is untyped, or `source` was never
        cited. If the summary names the source twice with different targets, the
        last one.
        """
        return self._final_targets().get(source)
