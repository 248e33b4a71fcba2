"""Citation rows: `Citation` and `InlineCitation`, the pydantic models of a cited source.

Whatever builds a citation from wire data (`model_validate`, `model_validate_json`,
the constructor) reads `target` through `parse_citation_target`, so a malformed
target becomes None and the rest of the row is kept. Fields the SDK does not
model (`type`, `search_result_index`, position fields, ...) are kept as extras,
and `model_dump()` gives them back with the target in its wire form, less every
`provider` member at any depth, extras included: every dump a user reaches
without naming the provider (`model_dump` in any mode, `model_dump_json`, a
`TypeAdapter`'s, so FastAPI's) leaves it out, and
`model_dump(context={"include_provider": True})` is the full wire form. One
wrap serializer (`_dump`) does it; pydantic passes it the context.

Also here: `load_citations`, which reads a list of rows off the wire, and
`STREAM_OFFSET`, the validation context's key that gives a streamed row its
offset when the events' fast path validates it from the event's JSON.
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
# The validation context's key for a streamed row's offset (`InlineCitation`'s validator).
STREAM_OFFSET = "silvia_client.stream_offset"
SKIPPED = "skipped %d malformed citation row(s)"  # the warning, with the count of bad rows


def _target_to_wire(target: CitationTarget | None) -> dict[str, object] | None:
    return None if target is None else target.to_wire()


def _read_target(value: object) -> CitationTarget | None:
    # A target built by hand is already a value; anything else is wire data. A
    # wire target is a dict, checked first: `isinstance` against the nine target
    # classes costs as much as parsing the dict.
    if type(value) is not dict and isinstance(value, CitationTarget):
        return value
    return parse_citation_target(value)


# The parser, not pydantic, decides what a target is: it never fails a row.
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
        # The row as pydantic dumps it (target in wire form, extras kept), then without
        # any `provider` unless the caller asked for it by name.
        dumped = handler(self)
        return dumped if asks_for_provider(info.context) else without_provider(dumped)

    def __repr__(self) -> str:
        # The modelled fields as they are (a target's repr never shows its provider),
        # and of the extras only their names: an extra is whatever the server added,
        # `{"provider": "plaid"}` included, at any depth.
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
        # The events' fast path validates a row straight from its event's JSON
        # (`chat/events.py`) and hands the stream's offset in the context; set here
        # as the plain path sets it, in the row's data, so it counts as set alike.
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
    """Read a list of wire citation rows, keeping the good rows and reporting the bad ones.

    `rows` is what the wire held: normally a list of objects; None (or a missing
    field) gives an empty result; anything else is reported as one error. Bad
    rows are counted in one warning per list (`SKIPPED`), never shown.
    """
    if rows is None:
        return CitationRows(())
    if not isinstance(rows, list):
        return CitationRows((), (RowError(-1, f"expected a list, got {type(rows).__name__}"),))
    good: list[CitationT] = []
    bad: list[RowError] = []
    for index, row in enumerate(rows):
        try:
            # A dict subclass is read as a plain copy of what it holds (`dict()`'s
            # reading), whatever its own `get` or `items` say: pydantic-core versions
            # differ in how they read a subclass, and a row must read the same on each.
            plain = dict(row) if isinstance(row, dict) and type(row) is not dict else row
            good.append(model.model_validate(plain))
        except ValidationError as error:
            bad.append(RowError(index, _reason(error), row))
        except Exception as error:  # a mapping whose own methods fail is a bad row too
            bad.append(RowError(index, f"unreadable row: {type(error).__name__}", row))
    if bad:
        logger.warning(SKIPPED, len(bad))
    return CitationRows(tuple(good), tuple(bad))
