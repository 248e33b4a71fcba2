"""Citation rows: `Citation`, `InlineCitation`, and a loader that never fails a whole list.

Whatever builds a citation from wire data (`model_validate`, `model_validate_json`,
the constructor) reads `target` through `parse_citation_target`, so a malformed
target becomes None and the rest of the row is kept. Fields the SDK does not
model (`type`, `search_result_index`, position fields, ...) are kept as extras,
and `model_dump()` gives them back with the target in its wire form.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Annotated, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator, ValidationError

from ._parse import parse_citation_target
from ._targets import CitationTarget

__all__ = ["Citation", "CitationRows", "InlineCitation", "RowError", "load_citations"]

logger = logging.getLogger("silvia_client")


def _target_to_wire(target: CitationTarget | None) -> dict[str, object] | None:
    return None if target is None else target.to_wire()


# The parser, not pydantic, decides what a target is: it never fails a row.
WireTarget = Annotated[
    CitationTarget | None,
    PlainValidator(parse_citation_target),
    PlainSerializer(_target_to_wire),
]


class Citation(BaseModel):
    """One cited source: what it is (`source`, `title`), what was quoted, and what it points at.

    `target` is None when the server sent none (rows saved before targets
    existed) or sent one this SDK cannot read; then fall back to `source` and
    `title`, as `resolve_citation` does.
    """

    # defer_build keeps `import silvia_client` quick (the schema is built on first
    # use); hide_input_in_errors keeps targets, and so providers, out of messages.
    model_config = ConfigDict(
        extra="allow", frozen=True, strict=True, defer_build=True, hide_input_in_errors=True
    )

    source: str
    title: str | None = None
    cited_text: str | None = None
    target: WireTarget = None


class InlineCitation(Citation):
    """A citation as it streamed in, attached to the answer text.

    `offset` is the length of the answer text when the citation arrived, so a
    UI can place its marker; None for rows reloaded from history, which have no
    such position unless the server stored one.
    """

    offset: int | None = None


CitationT = TypeVar("CitationT", bound=Citation)


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


def _reason(error: ValidationError) -> str:
    # Only locations and error types: a pydantic message quotes the input,
    # which may hold a target and its provider.
    parts = []
    for detail in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in detail["loc"]) or "row"
        parts.append(f"{where}: {detail['type']}")
    return "; ".join(parts)


def load_citations(rows: object, model: type[CitationT]) -> CitationRows[CitationT]:
    """Read a list of wire citation rows, keeping the good rows and reporting the bad ones.

    `rows` is what the wire held: normally a list of objects; None (or a missing
    field) gives an empty result; anything else is reported as one error.
    """
    if rows is None:
        return CitationRows(())
    if not isinstance(rows, list):
        return CitationRows((), (RowError(-1, f"expected a list, got {type(rows).__name__}"),))
    good: list[CitationT] = []
    bad: list[RowError] = []
    for index, row in enumerate(rows):
        try:
            good.append(model.model_validate(row))
        except ValidationError as error:
            bad.append(RowError(index, _reason(error), row))
    if bad:
        logger.warning("skipped %d malformed citation row(s)", len(bad))
    return CitationRows(tuple(good), tuple(bad))
