"""The QA script format: one JSON file of prompts, each with optional expectations.

JSON because every supported Python reads it (`tomllib` is 3.11+). The whole format::

    {
      "name": "Staging smoke test",                  # optional, used in the reports
      "timing": {"max_first_text_s": 5, "max_turn_s": 30, "severity": "warning"},
      "prompts": [                                   # required, non-empty, in order
        {
          "id": "checking",                          # default p1, p2, ...; unique
          "message": "How much is in checking?",     # required, sent as is
          "scenario": "account",                     # x-silvia-scenario; a real server ignores it
          "continue": false,                         # continue the previous prompt's session
          "expect": {"complete": true, "cites_account": true, "cites_kinds": ["account"],
                     "no_citations": false, "no_old_checkpoint": true, "max_turn_s": 20}
        }
      ]
    }

`timing` gives every prompt time budgets (seconds, positive) for the `timing` rule, a
warning unless `severity` is `"error"`; a prompt's `expect` may set its own. An id is
1 to 64 letters, digits, `-`, `_` or `.`; a scenario name follows the reference
server's own rule (`testing.is_scenario_name`). What each expectation means: docs/qa.md.
Any object may carry a `comment`, which the loader ignores; other unknown keys are
errors. The file form is read through the pydantic models below; every error says its
place (`prompts[1].scenario`) and, for a file `load_script` read, its line and column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ..citations import TargetKind
from ._rule import Severity

__all__ = [
    "Expectations",
    "Prompt",
    "Script",
    "ScriptFormatError",
    "TimingBudget",
    "load_script",
    "parse_expectations",
    "parse_script",
]

TARGET_KINDS: tuple[str, ...] = get_args(TargetKind)


class ScriptFormatError(ValueError):
    """A QA script that is not in the format.

    `where` is the place in the JSON the message starts with (`"prompts[1].scenario"`;
    `""` for the script as a whole); `line` and `column` (1-based) are where that
    place is in the file, when `load_script` read one (None otherwise).
    """

    def __init__(
        self, message: str, *, where: str = "", line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.where = where
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Expectations:
    """What one prompt's turn should show, beyond the server's rules. None: not checked."""

    complete: bool | None = None
    cites_account: bool | None = None
    cites_kinds: tuple[str, ...] = ()
    no_citations: bool | None = None
    no_old_checkpoint: bool = False
    max_first_text_s: float | None = None
    max_turn_s: float | None = None
    timing_severity: Severity = "warning"

    @property
    def timed(self) -> bool:
        """Whether a time budget is set (the `timing` rule applies)."""
        return self.max_first_text_s is not None or self.max_turn_s is not None

    @property
    def only_timing(self) -> bool:
        """Whether time budgets are all there is (then the `expectations` rule has no row)."""
        untimed = replace(self, max_first_text_s=None, max_turn_s=None, timing_severity="warning")
        return self.timed and untimed == Expectations()

    def to_dict(self) -> dict[str, object]:
        """The expectations that are set, as a QA script spells them."""
        out: dict[str, object] = {}
        for key, value in vars(self).items():
            if key == "cites_kinds":
                value = list(value) or None
            elif key == "no_old_checkpoint":
                value = value or None
            elif key == "timing_severity" and not self.timed:
                value = None
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Prompt:
    """One prompt of a script."""

    id: str
    message: str
    scenario: str | None = None
    continue_session: bool = False
    expect: Expectations | None = field(default=None)


@dataclass(frozen=True)
class TimingBudget:
    """A script's `timing`: the budgets every prompt gets, and how bad missing one is."""

    max_first_text_s: float | None = None
    max_turn_s: float | None = None
    severity: Severity = "warning"


@dataclass(frozen=True)
class Script:
    """A QA script: its prompts, in order."""

    prompts: tuple[Prompt, ...]
    name: str | None = None
    timing: TimingBudget | None = None


# -- the file form ----------------------------------------------------------------------

_Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _refused(problem: str) -> PydanticCustomError:
    # The message goes in as context, so braces in a shown value stay text.
    return PydanticCustomError("script", "{problem}", {"problem": problem})


class _Object(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    comment: Any = None  # a word for the reader


class _TimingFile(_Object):
    max_first_text_s: _Seconds | None = None
    max_turn_s: _Seconds | None = None
    severity: Severity = "warning"


class _ExpectFile(_Object):
    complete: bool | None = None
    cites_account: bool | None = None
    cites_kinds: list[str] = []
    no_citations: bool | None = None
    no_old_checkpoint: bool | None = None
    max_first_text_s: _Seconds | None = None
    max_turn_s: _Seconds | None = None

    @field_validator("cites_kinds")
    @classmethod
    def _known(cls, kinds: list[str]) -> list[str]:
        unknown = [kind for kind in kinds if kind not in TARGET_KINDS]
        if unknown:
            raise _refused(
                f"unknown kind(s) {', '.join(map(repr, unknown))}; "
                f"the kinds are {', '.join(TARGET_KINDS)}"
            )
        return kinds


class _PromptFile(_Object):
    id: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    message: str
    scenario: Any = None
    continue_: bool = Field(False, alias="continue")
    expect: _ExpectFile | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, message: str) -> str:
        if not message.strip():
            raise _refused("expected a non-empty string")
        return message

    @field_validator("scenario")
    @classmethod
    def _scenario(cls, name: object) -> object:
        from ..testing import is_scenario_name  # the server's own rule, loaded when needed

        if name is not None and not is_scenario_name(name):
            shown = repr(name) if isinstance(name, str) else type(name).__name__
            shown = shown if len(shown) <= 80 else f"{shown[:77]}..."
            raise _refused(
                f"expected a scenario name ({shown} is not one): letters, digits, "
                "'-', '_' and '.', starting with a letter or digit"
            )
        return name


class _ScriptFile(_Object):
    name: str | None = None
    timing: _TimingFile | None = None
    prompts: list[_PromptFile] = Field(min_length=1)


# What a field holds, said when a value does not fit it (by the field's name).
_EXPECTED = {
    "prompts": "expected a non-empty list",
    "message": "expected a non-empty string",
    "id": "use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
    "name": "expected a string",
    "timing": "expected an object",
    "expect": "expected an object",
    "severity": 'expected "warning" or "error"',
    "cites_kinds": "expected a list of target kinds",
    "max_first_text_s": "expected a number of seconds",
    "max_turn_s": "expected a number of seconds",
}
_OUT_OF_RANGE = "expected a positive number of seconds"
# The model of an object, by the key it sits under (None: the script itself).
_MODELS: dict[str | None, type[_Object]] = {
    None: _ScriptFile,
    "timing": _TimingFile,
    "prompts": _PromptFile,
    "expect": _ExpectFile,
}

Loc = tuple[str | int, ...]


def _where(loc: Loc) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in loc)[1:]


class _Invalid(Exception):
    def __init__(self, loc: Loc, problem: str, label: str | None = None) -> None:
        super().__init__(problem)
        self.loc, self.problem = loc, problem
        self.label = _where(loc) if label is None else label  # what the message starts with

    def error(self) -> ScriptFormatError:
        return ScriptFormatError(f"{self.label}: {self.problem}", where=_where(self.loc))


def _first_problem(error: ValidationError, prefix: Loc = ()) -> _Invalid:
    """The error to report: an unknown key first (a typo explains the rest), then in order."""
    details = [(d["type"], (*prefix, *d["loc"]), d["msg"]) for d in error.errors()]
    extra = [loc for kind, loc, _ in details if kind == "extra_forbidden"]
    if extra:
        parent = extra[0][:-1]
        keys = [repr(loc[-1]) for loc in extra if loc[:-1] == parent]
        owner = _MODELS[next((s for s in reversed(parent) if isinstance(s, str)), None)]
        allowed = sorted(f.alias or name for name, f in owner.model_fields.items())
        allowed.remove("comment")
        problem = f"unknown key(s) {', '.join(keys)}; allowed: {', '.join(allowed)}"
        return _Invalid(parent, problem, _where(parent) or "script")
    kind, loc, message = details[0]
    if kind == "script":
        return _Invalid(loc, message)
    if not loc:
        return _Invalid(loc, 'expected a JSON object with a "prompts" list')
    if isinstance(loc[-1], int) and loc[-2:-1] == ("prompts",):
        return _Invalid(loc, "expected an object with a 'message'")
    while isinstance(loc[-1], int):  # an item of a list: the list's message
        loc = loc[:-1]
    if kind in ("greater_than", "finite_number"):
        return _Invalid(loc, _OUT_OF_RANGE)
    return _Invalid(loc, _EXPECTED.get(str(loc[-1]), "expected true or false"))


def _expectations(value: _ExpectFile, timing: TimingBudget | None) -> Expectations:
    timing = timing or TimingBudget()
    return Expectations(
        complete=value.complete,
        cites_account=value.cites_account,
        cites_kinds=tuple(value.cites_kinds),
        no_citations=value.no_citations,
        no_old_checkpoint=bool(value.no_old_checkpoint),
        max_first_text_s=value.max_first_text_s or timing.max_first_text_s,
        max_turn_s=value.max_turn_s or timing.max_turn_s,
        timing_severity=timing.severity,
    )


def parse_expectations(value: object, timing: TimingBudget | None = None) -> Expectations:
    """Read an `expect` object (what `assert_conforms(..., expect={...})` takes)."""
    try:
        return _expectations(_ExpectFile.model_validate(value), timing)
    except ValidationError as error:
        raise _first_problem(error, ("expect",)).error() from None


def _script(data: object) -> Script:
    try:
        form = _ScriptFile.model_validate(data)
    except ValidationError as error:
        raise _first_problem(error) from None
    timing = (
        None if form.timing is None else TimingBudget(**form.timing.model_dump(exclude={"comment"}))
    )
    prompts: list[Prompt] = []
    for index, value in enumerate(form.prompts):
        prompt_id = value.id or f"p{index + 1}"
        if any(prompt.id == prompt_id for prompt in prompts):
            raise _Invalid(("prompts", index, "id"), f"{prompt_id!r} is used twice")
        if value.continue_ and index == 0:
            raise _Invalid(
                ("prompts", 0, "continue"), "the first prompt has no session to continue"
            )
        expect = value.expect or (_ExpectFile() if timing is not None else None)
        prompts.append(
            Prompt(
                prompt_id,
                value.message,
                value.scenario,
                value.continue_,
                None if expect is None else _expectations(expect, timing),
            )
        )
    return Script(tuple(prompts), form.name, timing)


def parse_script(data: object) -> Script:
    """A script from its JSON value. Raises `ScriptFormatError`."""
    try:
        return _script(data)
    except _Invalid as invalid:
        raise invalid.error() from None


def load_script(path: str | Path) -> Script:
    """Read a script file. Raises `ScriptFormatError` (also for a file that cannot be read)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ScriptFormatError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ScriptFormatError(f"{path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ScriptFormatError(f"{path} is not JSON: {error}") from None
    try:
        return _script(data)
    except _Invalid as invalid:
        offset = _place(text, invalid.loc)
        line, column = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
        raise ScriptFormatError(
            f"{path}: line {line} column {column}: {invalid.error()}",
            where=_where(invalid.loc),
            line=line,
            column=column,
        ) from None


# Finding a place in the text (columns count characters, as `json`'s own errors do).
_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between tokens
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    space = _SPACE.match(text, at)
    return at if space is None else space.end()


def _place(text: str, loc: Loc) -> int:
    """The offset in `text` (valid JSON) of the value at `loc`, or of the nearest above it."""
    at = _skip(text, 0)
    for step in loc:
        inner = _member(text, at, step)
        if inner is None:
            break
        at = inner
    return at


def _member(text: str, at: int, step: str | int) -> int | None:
    """Where the value of key or index `step` of the object or array at `at` starts.

    The last of repeated keys, as `json.loads` keeps it; None when there is none.
    """
    if text[at] != ("{" if isinstance(step, str) else "["):
        return None
    found, index = None, 0
    at = _skip(text, at + 1)
    while text[at] not in "]}":
        if isinstance(step, str):
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            if key == step:
                found = at
        elif index == step:
            return at
        else:
            index += 1
        _, at = _DECODER.raw_decode(text, at)  # past the value
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return found
