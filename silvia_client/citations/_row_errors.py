"""What a loader of citation rows reports: the rows it read, and where and why it skipped others.

Kept apart from `_rows.py` (the pydantic models) so that code which only
reports on rows does not load pydantic's model machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ._targets import TargetedRow

__all__ = ["CitationRows", "RowError"]

CitationT = TypeVar("CitationT", bound=TargetedRow)  # a `Citation`, which sits above this


@dataclass(frozen=True)
class RowError:
    """A citation row that could not be read: where it was and why (never its content)."""

    index: int
    reason: str
    raw: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class CitationRows(Generic[CitationT]):
    """The rows of a citation list that could be read, and the ones that could not."""

    citations: tuple[CitationT, ...]
    errors: tuple[RowError, ...] = ()
