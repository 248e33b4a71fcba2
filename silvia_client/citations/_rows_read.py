"""Citation rows off the wire: the quick way from JSON, and loaders that never fail a list.

Where things are: `citation_from_json`, the quick way from a row off JSON to the
model `model_validate` gives, which makes each kept row as few objects as it
can (`_target_from_json` shares targets, the shapes table shares fields-sets
and the names of extras); and the loaders of a list of rows, `load_citations`
and `load_json_citations`, which report each bad row and keep the rest.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, Final, TypeAlias

from pydantic import ValidationError

from ._parse import parse_citation_target
from ._row_errors import CitationRows, RowError
from ._rows import (
    Citation,
    CitationT,
    InlineCitation,
    _new_object,
    _read_target,
    _set_attribute,
    _SharedFieldsSet,
)
from ._targets import CitationTarget

__all__ = [
    "SKIPPED",
    "Citation",
    "InlineCitation",
    "citation_from_json",
    "load_citations",
    "load_json_citations",
    "logger",
]

logger = logging.getLogger("silvia_client")
SKIPPED = "skipped %d malformed citation row(s)"  # the warning, with the count of bad rows


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


# What rows with the same keys, in the same order, have in common, by model: the
# shared fields-set and the names of the extras. By the row's keys (and "offset"
# last when it is set from outside the row). Bounded, as `_JSON_TARGETS` is.
_Shape: TypeAlias = "tuple[_SharedFieldsSet, tuple[str, ...]]"
_CITATION_SHAPES: dict[tuple[str, ...], _Shape] = {}
_INLINE_CITATION_SHAPES: dict[tuple[str, ...], _Shape] = {}
_SHAPES_MAX = 512


def _new_shape(
    shapes: dict[tuple[str, ...], _Shape], names: tuple[str, ...], model: type[Citation]
) -> _Shape:
    if len(shapes) >= _SHAPES_MAX:
        shapes.clear()
    fields = model.model_fields
    extra_names = tuple(name for name in names if name not in fields)
    shape = shapes[names] = (_SharedFieldsSet(names), extra_names)
    return shape


_OFFSET_UNSET: Final[Any] = object()


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    """A quick way to set a row's `name` slot: its descriptor's own setter, if it is one."""
    descriptor = inspect.getattr_static(InlineCitation, name)
    if isinstance(descriptor, MemberDescriptorType) and descriptor is inspect.getattr_static(
        Citation, name
    ):
        return descriptor.__set__  # a third of `object.__setattr__`'s cost
    return lambda row, value: _set_attribute(row, name, value)


_set_extra = _slot_setter("__pydantic_extra__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_private = _slot_setter("__pydantic_private__")


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

    A turn or a session keeps every row, and as they pile up the cyclic garbage
    collector walks them, again and again: so a row built here is as few
    objects it tracks as the interpreter allows, one (see `_prime`). Its
    target is shared with the rows that sent the same one; its fields-set with
    the rows that had the same keys (see `_SharedFieldsSet`); its extras are a
    dict of strings and numbers, which the collector does not track.

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
            if model is InlineCitation:
                shapes = _INLINE_CITATION_SHAPES
                if offset is _OFFSET_UNSET:
                    names = tuple(row)
                    offset = get("offset")
                    # Strict mode: an int, not a bool (nor a float).
                    ok = offset is None or type(offset) is int
                else:
                    names = (*row, "offset")
                    ok = True
            else:
                shapes = _CITATION_SHAPES
                names = tuple(row)
                ok = offset is _OFFSET_UNSET
            if ok:
                fields_set, extra_names = shapes.get(names) or _new_shape(shapes, names, model)
                target = get("target")
                # A new dict rather than a copy of the row: one built of strings and
                # numbers is not tracked by the garbage collector, while a copy of a
                # row that held an object (its target) is, until a full collection.
                extra = {}
                for name in extra_names:  # a comprehension is a call more, in 3.11
                    extra[name] = row[name]
                # What `BaseModel.model_construct` does, minus its per-call overhead,
                # and with the fields set one by one: so they stay in the instance's
                # own slots (see `_prime`), not in a dict the collector tracks.
                citation = _new_object(model)
                _set_attribute(citation, "source", source)
                _set_attribute(citation, "title", title)
                _set_attribute(citation, "cited_text", cited_text)
                if target is not None:
                    try:  # `_target_from_json`, its usual case inlined
                        target = _JSON_TARGETS[tuple(target.items())]
                    except (AttributeError, KeyError, TypeError):
                        target = _target_from_json(target)
                _set_attribute(citation, "target", target)
                if model is InlineCitation:
                    _set_attribute(citation, "offset", offset)
                _set_extra(citation, extra)
                _set_fields_set(citation, fields_set)
                _set_private(citation, None)
                return citation
    if offset is not _OFFSET_UNSET:
        row = {**row, "offset": offset}  # type: ignore[dict-item]
    return model.model_validate(row)


def _reason(error: ValidationError) -> str:
    # Only locations and error types: a pydantic message quotes the input,
    # which may hold a target and its provider.
    parts = []
    for detail in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in detail["loc"]) or "row"
        parts.append(f"{where}: {detail['type']}")
    return "; ".join(parts)


def _load(
    rows: object,
    model: type[CitationT],
    read: Callable[[type[CitationT], object], CitationT],
    skipped: list[int] | None = None,
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
        if skipped is None:
            logger.warning(SKIPPED, len(bad))
        else:
            skipped.append(len(bad))
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


def load_json_citations(
    rows: object, model: type[CitationT], skipped: list[int] | None = None
) -> CitationRows[CitationT]:
    """`load_citations` for rows straight from `json.loads` (see `citation_from_json`).

    With `skipped`, the count of bad rows is appended to it rather than logged:
    a reader that runs with the collector paused logs once the pause is over,
    so that no logging handler (the caller's code) runs inside it.
    """
    return _load(rows, model, citation_from_json, skipped)
