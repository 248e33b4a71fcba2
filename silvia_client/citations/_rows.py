"""Citation rows: `Citation` and `InlineCitation` (pydantic), and `load_citations`.

A row's `target` is read by `parse_citation_target` however the row is built,
so a bad target is None and the rest of the row is kept. Fields the SDK does not
model are kept as extras. Every dump (`model_dump` in any mode, `model_dump_json`,
a `TypeAdapter`'s, so FastAPI's) leaves out every `provider` member at any depth,
unless asked for with `context={"include_provider": True}`: one wrap serializer.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainSerializer,
    PlainValidator,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from ._targets import (
    CitationRows,
    CitationTarget,
    RowError,
    asks_for_provider,
    parse_citation_target,
    without_provider,
)

logger = logging.getLogger("silvia_client")
STREAM_OFFSET = "silvia_client.stream_offset"  # the validation context's key for `offset`
SKIPPED = "skipped %d malformed citation row(s)"


def _target_to_wire(target: CitationTarget | None) -> dict[str, object] | None:
    return None if target is None else target.to_wire()


def _read_target(value: object) -> CitationTarget | None:
    # A dict is checked first: `isinstance` against the nine classes costs as much as parsing.
    if type(value) is not dict and isinstance(value, CitationTarget):
        return value
    return parse_citation_target(value)


WireTarget = Annotated[
    CitationTarget | None,
    PlainValidator(_read_target),
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
    model_config: ClassVar[ConfigDict] = ConfigDict(
        extra="allow", frozen=True, strict=True, defer_build=True, hide_input_in_errors=True
    )

    source: str
    title: str | None = None
    cited_text: str | None = None
    target: WireTarget = None

    # No return annotation, on purpose: pydantic would take it for the schema of every
    # dump, and a FastAPI response's schema would lose the row's fields.
    @model_serializer(mode="wrap")
    def _dump(  # type: ignore[no-untyped-def]
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ):
        dumped = handler(self)
        return dumped if asks_for_provider(info.context) else without_provider(dumped)

    def __repr__(self) -> str:
        # Of the extras only their names: one may be `{"provider": "plaid"}`, at any depth.
        fields = [f"{name}={getattr(self, name)!r}" for name in type(self).model_fields]
        if self.model_extra:
            fields.append(f"extra_keys={tuple(self.model_extra)!r}")
        return f"{type(self).__name__}({', '.join(fields)})"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from ..display import citation_html  # imported here: only notebooks need it

        return citation_html(self)

    def _repr_markdown_(self) -> str:
        from ..display import citation_markdown

        return citation_markdown(self)


class InlineCitation(Citation):
    """A citation as it streamed in, attached to the answer text.

    `offset` is the length of the answer text when the citation arrived, so a
    UI can place its marker; None for rows reloaded from history, which have no
    such position unless the server stored one.
    """

    offset: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _offset_of_stream(cls, data: Any, info: ValidationInfo) -> Any:
        # The events' fast path validates a row from its JSON and hands the offset in the
        # context; set in the row's data, as the plain path does, so it counts as set alike.
        context = info.context
        if type(data) is dict and type(context) is dict and STREAM_OFFSET in context:
            return {**data, "offset": context[STREAM_OFFSET]}
        return data


CitationT = TypeVar("CitationT", bound=Citation)


def _reason(error: ValidationError) -> str:
    # Only locations and error types: a pydantic message quotes the input,
    # which may hold a target and its provider.
    parts = []
    for detail in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in detail["loc"]) or "row"
        parts.append(f"{where}: {detail['type']}")
    return "; ".join(parts)


def load_citations(rows: object, model: type[CitationT]) -> CitationRows[CitationT]:
    """Read a list of wire rows, keeping the good and reporting the bad.

    None gives an empty result; anything but a list is one error. Bad rows are
    counted in one warning per list (`SKIPPED`), never shown.
    """
    if rows is None:
        return CitationRows(())
    if not isinstance(rows, list):
        return CitationRows((), (RowError(-1, f"expected a list, got {type(rows).__name__}"),))
    good: list[CitationT] = []
    bad: list[RowError] = []
    for index, row in enumerate(rows):
        try:
            # A dict subclass is read as `dict()` copies it: pydantic-core versions
            # read a subclass differently, and a row must read the same on each.
            plain = dict(row) if isinstance(row, dict) and type(row) is not dict else row
            good.append(model.model_validate(plain))
        except ValidationError as error:
            bad.append(RowError(index, _reason(error), row))
        except Exception as error:  # a mapping whose own methods fail is a bad row too
            bad.append(RowError(index, f"unreadable row: {type(error).__name__}", row))
    if bad:
        logger.warning(SKIPPED, len(bad))
    return CitationRows(tuple(good), tuple(bad))
