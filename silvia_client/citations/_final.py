"""A source's final target, read off the rows as sent: what `target_for` answers. (The
one-meaning-per-source registry is the server's; a turn resumed from a checkpoint
written before targets existed can stream a source untyped, then typed.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._rows import Citation
    from ._targets import CitationTarget


def final_targets(
    streamed: Iterable[Citation], summary: Iterable[Citation]
) -> dict[str, CitationTarget | None]:
    """Each source's final target (None: untyped), streamed sources first, in order."""
    targets = {row.source: row.target for row in streamed}  # the last streamed row wins
    for row in summary:
        targets[row.source] = row.target  # the summary over the stream; its last row wins
    return targets


class FinalTargets:
    """`target_for` of a `Turn` or `Message`, which declare `_targets`, an empty dict."""

    __slots__ = ()

    citations: Sequence[Citation]
    inline_citations: Sequence[Citation]
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
