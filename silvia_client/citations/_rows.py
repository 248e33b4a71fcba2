"""Citation rows: `Citation`, `InlineCitation`, and a loader that never fails a whole list.

Whatever builds a citation from wire data (`model_validate`, `model_validate_json`,
the constructor) reads `target` through `parse_citation_target`, so a malformed
target becomes None and the rest of the row is kept. Fields the SDK does not
model (`type`, `search_result_index`, position fields, ...) are kept as extras,
and `model_dump()` gives them back with the target in its wire form.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator, ValidationError

from ._parse import parse_citation_target
from ._row_errors import CitationRows, RowError
from ._targets import TARGET_TYPES, CitationTarget

__all__ = [
    "Citation",
    "CitationRows",
    "InlineCitation",
    "RowError",
    "citation_from_json",
    "load_citations",
    "load_json_citations",
]

logger = logging.getLogger("silvia_client")


def _target_to_wire(target: CitationTarget | None) -> dict[str, object] | None:
    return None if target is None else target.to_wire()


def _read_target(value: object) -> CitationTarget | None:
    # A target built by hand is already a value; anything else is wire data. A
    # wire target is a dict, checked first: `isinstance` against the nine target
    # classes costs as much as parsing the dict.
    if type(value) is not dict and isinstance(value, TARGET_TYPES):
        return value
    return parse_citation_target(value)


# Targets read off JSON, by their wire form: a stream or a session cites a few
# sources many times, and each row's target is an equal, immutable value. Sharing
# one value per wire form makes a row's target cost a lookup instead of a parse
# and a new object, and leaves the garbage collector one object fewer to walk per
# row that is kept. Bounded: a server that sends ever new targets empties it now
# and then. Only for plain dicts from JSON, whose items are the whole input.
_JSON_TARGETS: dict[tuple[tuple[str, Any], ...], CitationTarget | None] = {}
_JSON_TARGETS_MAX = 512
_MISSING: Final[Any] = object()


def _target_from_json(value: object) -> CitationTarget | None:
    """`_read_target(value)` for a value straight from JSON: the same value, maybe shared.

    The key is the target's items in order. Two keys are equal only when each
    value equals the other's, and for the parser every string, and None, is
    equal only to itself, while any other value of a field (a number, a bool,
    a list) voids the target or the provider whatever it is: equal keys give
    equal targets. A target holding a list or an object (`accounts`) has no
    hashable key, and is read each time.
    """
    if type(value) is not dict:
        return _read_target(value)
    key = tuple(value.items())
    try:
        target = _JSON_TARGETS.get(key, _MISSING)
    except TypeError:  # unhashable: a list or an object inside
        return parse_citation_target(value)
    if target is _MISSING:
        target = parse_citation_target(value)
        if len(_JSON_TARGETS) >= _JSON_TARGETS_MAX:
            _JSON_TARGETS.clear()
        _JSON_TARGETS[key] = target
    return target  # type: ignore[no-any-return]


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
    model_config = ConfigDict(
        extra="allow", frozen=True, strict=True, defer_build=True, hide_input_in_errors=True
    )

    source: str
    title: str | None = None
    cited_text: str | None = None
    target: WireTarget = None

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


CitationT = TypeVar("CitationT", bound=Citation)


def _reason(error: ValidationError) -> str:
    # Only locations and error types: a pydantic message quotes the input,
    # which may hold a target and its provider.
    parts = []
    for detail in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in detail["loc"]) or "row"
        parts.append(f"{where}: {detail['type']}")
    return "; ".join(parts)


_OFFSET_UNSET: Final[Any] = object()
_CITATION_FIELDS = frozenset({"source", "title", "cited_text", "target"})
_INLINE_CITATION_FIELDS = _CITATION_FIELDS | {"offset"}
_new_object = object.__new__
_set_attribute = object.__setattr__


def citation_from_json(
    model: type[CitationT], row: object, offset: int | None = _OFFSET_UNSET
) -> CitationT:
    """`model.model_validate(row)`, for a row straight from `json.loads`; quicker for good rows.

    With `offset` (an `InlineCitation` only), the row's own `offset` is replaced
    by it, as `model.model_validate({**row, "offset": offset})` would.

    A stream or a session carries thousands of rows. For `Citation` and
    `InlineCitation`, a row whose fields have the types the model asks for is
    built here, after the same checks, into the same model `model_validate`
    gives: the same field values (the target through `parse_citation_target`,
    the validator's own parser, and shared between rows with the same wire
    target: see `_target_from_json`), the same extras in the same order, the
    same `model_fields_set`. Any other row, or any other model (a subclass may
    add fields or validators), goes to `model_validate`, which gives its error.

    Only for rows `json.loads` made: their keys are all strings and their
    values are plain `str`, `int`, `dict`, ... (pydantic rejects a non-string
    key, which this path does not look for).
    """
    if type(row) is dict and (model is InlineCitation or model is Citation):
        get = row.get
        source, title, cited_text = get("source"), get("title"), get("cited_text")
        if (
            type(source) is str
            and (title is None or type(title) is str)
            and (cited_text is None or type(cited_text) is str)
        ):
            fields_set = set(row)
            if model is InlineCitation:
                fields = _INLINE_CITATION_FIELDS
                if offset is _OFFSET_UNSET:
                    offset = get("offset")
                    # Strict mode: an int, not a bool (nor a float).
                    ok = offset is None or type(offset) is int
                else:
                    fields_set.add("offset")
                    ok = True
            else:
                fields = _CITATION_FIELDS
                ok = offset is _OFFSET_UNSET
            if ok:
                target = get("target")
                values: dict[str, Any] = {
                    "source": source,
                    "title": title,
                    "cited_text": cited_text,
                    "target": None if target is None else _target_from_json(target),
                }
                if model is InlineCitation:
                    values["offset"] = offset
                # A new dict rather than a copy of the row: one built of strings and
                # numbers is not tracked by the garbage collector, while a copy of a
                # row that held an object (its target) is, until a full collection.
                extra = {key: value for key, value in row.items() if key not in fields}
                # What `BaseModel.model_construct` does, minus its per-call overhead.
                citation = _new_object(model)
                _set_attribute(citation, "__dict__", values)
                _set_attribute(citation, "__pydantic_extra__", extra)
                _set_attribute(citation, "__pydantic_fields_set__", fields_set)
                _set_attribute(citation, "__pydantic_private__", None)
                return citation
    if offset is not _OFFSET_UNSET:
        row = {**row, "offset": offset}  # type: ignore[dict-item]
    return model.model_validate(row)


def _load(
    rows: object, model: type[CitationT], read: Callable[[type[CitationT], object], CitationT]
) -> CitationRows[CitationT]:
    if rows is None:
        return CitationRows(())
    if not isinstance(rows, list):
        return CitationRows((), (RowError(-1, f"expected a list, got {type(rows).__name__}"),))
    good: list[CitationT] = []
    bad: list[RowError] = []
    for index, row in enumerate(rows):
        try:
            good.append(read(model, row))
        except ValidationError as error:
            bad.append(RowError(index, _reason(error), row))
        except Exception as error:  # a mapping whose own methods fail is a bad row too
            bad.append(RowError(index, f"unreadable row: {type(error).__name__}", row))
    if bad:
        logger.warning("skipped %d malformed citation row(s)", len(bad))
    return CitationRows(tuple(good), tuple(bad))


def _validate(model: type[CitationT], row: object) -> CitationT:
    if isinstance(row, dict) and type(row) is not dict:
        # A dict subclass is read as `dict()` reads it, through its own methods
        # where it overrides them: older pydantic-core (2.18, pydantic 2.7) reads
        # a dict subclass's storage instead, so a row whose methods fail (or say
        # something else) would read differently with the pydantic installed.
        row = dict(row)
    return model.model_validate(row)


def load_citations(rows: object, model: type[CitationT]) -> CitationRows[CitationT]:
    """Read a list of wire citation rows, keeping the good rows and reporting the bad ones.

    `rows` is what the wire held: normally a list of objects; None (or a missing
    field) gives an empty result; anything else is reported as one error.
    """
    return _load(rows, model, _validate)


def load_json_citations(rows: object, model: type[CitationT]) -> CitationRows[CitationT]:
    """`load_citations` for rows straight from `json.loads` (see `citation_from_json`)."""
    return _load(rows, model, citation_from_json)
