"""Citation rows: `Citation` and `InlineCitation`, the pydantic models of a cited source.

Whatever builds a citation from wire data (`model_validate`, `model_validate_json`,
the constructor) reads `target` through `parse_citation_target`, so a malformed
target becomes None and the rest of the row is kept. Fields the SDK does not
model (`type`, `search_result_index`, position fields, ...) are kept as extras,
and `model_dump()` gives them back with the target in its wire form.

Where things are: the models; `_SharedFieldsSet`, the fields-set that rows with
the same keys share, and `_prime`, which keeps a row's fields out of a dict of
its own (both so that a kept row is one object for the garbage collector). The
quick way from JSON to these models, and the loaders of a list of rows, are in
`_rows_read.py`.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn, TypeVar

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator

from ._parse import parse_citation_target
from ._targets import TARGET_TYPES, CitationTarget

__all__ = ["Citation", "CitationT", "InlineCitation"]

_new_object = object.__new__
_set_attribute = object.__setattr__


def _target_to_wire(target: CitationTarget | None) -> dict[str, object] | None:
    return None if target is None else target.to_wire()


def _read_target(value: object) -> CitationTarget | None:
    # A target built by hand is already a value; anything else is wire data. A
    # wire target is a dict, checked first: `isinstance` against the nine target
    # classes costs as much as parsing the dict.
    if type(value) is not dict and isinstance(value, TARGET_TYPES):
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
    model_config = ConfigDict(
        extra="allow", frozen=True, strict=True, defer_build=True, hide_input_in_errors=True
    )

    source: str
    title: str | None = None
    cited_text: str | None = None
    target: WireTarget = None

    @property
    def model_fields_set(self) -> set[str]:
        """The fields set when the row was built (pydantic's), this row's own set."""
        fields_set = self.__pydantic_fields_set__
        if type(fields_set) is _SharedFieldsSet:
            # Shared with other rows read off the wire: copied at first use, since the
            # caller may change it.
            fields_set = set(fields_set)
            _set_attribute(self, "__pydantic_fields_set__", fields_set)
        return fields_set

    def __getstate__(self) -> dict[Any, Any]:
        state = super().__getstate__()
        state["__pydantic_fields_set__"] = set(state["__pydantic_fields_set__"])
        return state

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


class _SharedFieldsSet(set[str]):
    """The `model_fields_set` of the rows read off JSON with the same keys: one set for all.

    A kept citation is then one object the garbage collector tracks, not two
    (see `citation_from_json`). Nothing mutates it: pydantic copies a model's
    fields-set before changing it (`model_copy`), and a copy is a plain set;
    `Citation.model_fields_set` gives a row its own plain set on first use; and
    a row pickles with a plain set. A mutating method raises `TypeError`, so
    anything else that would change it for every row fails loudly instead.
    """

    __slots__ = ()

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: object) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        return set, (list(self),)


def _refuse(self: _SharedFieldsSet, *args: object) -> NoReturn:
    raise TypeError("a citation's shared fields-set cannot change; copy it first")


for _name in (
    "add",
    "clear",
    "difference_update",
    "discard",
    "intersection_update",
    "pop",
    "remove",
    "symmetric_difference_update",
    "update",
    "__iand__",
    "__ior__",
    "__isub__",
    "__ixor__",
):
    setattr(_SharedFieldsSet, _name, _refuse)


def _prime(model: type[Citation]) -> None:
    """Have `model`'s instances keep their fields in the instance, not in a dict of their own.

    CPython 3.11 and 3.12 keep the attributes of an instance of such a class in
    the instance itself, as long as their names are in the class's table of
    shared keys; that table takes new names only from the class's first
    instances. `model_validate` gives each instance a dict of its own and adds
    no name, so had it built the first ones, `citation_from_json` would find
    the table closed, and each row it builds would carry a dict as well: one
    more object for the garbage collector to walk per kept row. An instance
    that sets the fields, in their order, first, opens the table to them.
    (Where the interpreter does not do this, 3.10 and 3.13, a row gets its
    dict, as before: the same row.)
    """
    instance = _new_object(model)
    for name in model.model_fields:
        _set_attribute(instance, name, None)


_prime(Citation)
_prime(InlineCitation)
