"""The QA script format: one JSON file of prompts, each with optional expectations.

JSON because it is in the standard library of every Python this SDK supports
(`tomllib` is 3.11+) and every QA tool can write it. The whole format::

    {
      "name": "Staging smoke test",
      "timing": {"max_first_text_s": 5, "max_turn_s": 30, "severity": "warning"},
      "prompts": [
        {
          "id": "checking",
          "message": "How much is in checking?",
          "scenario": "account",
          "continue": false,
          "expect": {"complete": true, "cites_account": true, "max_turn_s": 20}
        }
      ]
    }

- `name` (optional): the script's name, used in the reports.
- `timing` (optional): time budgets for every prompt, checked by the `timing`
  rule: `max_first_text_s` (seconds from the request to the first text) and
  `max_turn_s` (to `done`), positive numbers, each optional; and `severity`,
  `"warning"` (the default: a slow turn passes, with a warning) or `"error"`.
  A prompt's own `expect` may set other budgets.
- `prompts` (required, non-empty): in order. Each prompt has:
  - `message` (required): the user's message, sent as is;
  - `id` (optional): 1 to 64 letters, digits, `-`, `_` or `.`, unique; by
    default `p1`, `p2`, ... (the reports name prompts by it);
  - `scenario` (optional): the reference server's scenario to play, sent as
    the `x-silvia-scenario` header; a real server ignores it, so one script
    drives the reference server and staging alike. A name follows the
    reference server's own rule for its scenarios' names (letters, digits,
    `-`, `_` and `.`, starting with a letter or digit), checked here, so a name
    no server could have is the script's error, not a failed request;
  - `continue` (optional, default false): continue the previous prompt's
    session instead of starting one;
  - `expect` (optional): what this turn should show, beyond the server's
    rules; each key optional:
    - `complete`: `done` arrives (false: it must not);
    - `cites_account`: some citation targets an account or accounts (false:
      none does);
    - `cites_kinds`: a list of target kinds, each cited at least once;
    - `no_citations`: no citation at all (false: at least one);
    - `no_old_checkpoint`: true when the turn cannot have resumed from a
      checkpoint written before targets existed, so a source that streams
      untyped and is then typed is an error of `one-meaning-per-source`, not
      the warning it is otherwise;
    - `max_first_text_s`, `max_turn_s`: this prompt's time budgets (see
      `timing`), checked by the `timing` rule rather than `expectations`.

Any object (the script, `timing`, a prompt, an `expect`) may carry a
`comment`, any JSON value, which the loader ignores: a word for the reader.
Other unknown keys are errors, so a typo such as `"expects"` is caught rather
than ignored. Every error says where it is: the place in the JSON
(`prompts[1].scenario`), and, for a file `load_script` read, its line and column
(`ScriptFormatError.line`, `.column`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args

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
    "parse_timing",
]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TARGET_KINDS: tuple[str, ...] = get_args(TargetKind)


class ScriptFormatError(ValueError):
    """A QA script that is not in the format (the message says where).

    `where` is the place in the script's JSON the message starts with
    (`"prompts[1].scenario"`; `""` for the script as a whole); `line` and
    `column` (1-based) are where that place is in the file, when `load_script`
    read one (None otherwise).
    """

    def __init__(
        self,
        message: str,
        *,
        where: str = "",
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.where = where
        self.line = line
        self.column = column


def _error(where: str, problem: str) -> ScriptFormatError:
    return ScriptFormatError(f"{where}: {problem}", where=where)


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
        if self.complete is not None:
            out["complete"] = self.complete
        if self.cites_account is not None:
            out["cites_account"] = self.cites_account
        if self.cites_kinds:
            out["cites_kinds"] = list(self.cites_kinds)
        if self.no_citations is not None:
            out["no_citations"] = self.no_citations
        if self.no_old_checkpoint:
            out["no_old_checkpoint"] = True
        if self.max_first_text_s is not None:
            out["max_first_text_s"] = self.max_first_text_s
        if self.max_turn_s is not None:
            out["max_turn_s"] = self.max_turn_s
        if self.timed:
            out["timing_severity"] = self.timing_severity
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
class Script:
    """A QA script: its prompts, in order."""

    prompts: tuple[Prompt, ...]
    name: str | None = None
    timing: TimingBudget | None = None


COMMENT = "comment"
"""The key every object of a script may carry, and the loader ignores."""


def _keys(
    value: Mapping[str, object], allowed: set[str], where: str, at: str | None = None
) -> None:
    """Refuse keys not in `allowed` or `comment` (`at`: the object's place, when not `where`)."""
    unknown = sorted(set(value) - allowed - {COMMENT})
    if unknown:
        raise ScriptFormatError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}",
            where=where if at is None else at,
        )


def _bool(value: object, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise _error(where, "expected true or false")


def _seconds(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _error(where, "expected a number of seconds")
    if not (math.isfinite(value) and value > 0):
        raise _error(where, "expected a positive number of seconds")
    return float(value)


@dataclass(frozen=True)
class TimingBudget:
    """A script's `timing`: the budgets every prompt gets, and how bad missing one is."""

    max_first_text_s: float | None = None
    max_turn_s: float | None = None
    severity: Severity = "warning"


def parse_timing(value: object, where: str = "timing") -> TimingBudget:
    """Read a script's `timing` object."""
    if not isinstance(value, dict):
        raise _error(where, "expected an object")
    _keys(value, {"max_first_text_s", "max_turn_s", "severity"}, where)
    severity = value.get("severity", "warning")
    if severity not in ("warning", "error"):
        raise _error(f"{where}.severity", 'expected "warning" or "error"')
    return TimingBudget(
        _seconds(value.get("max_first_text_s"), f"{where}.max_first_text_s"),
        _seconds(value.get("max_turn_s"), f"{where}.max_turn_s"),
        severity,
    )


def parse_expectations(
    value: object, where: str = "expect", timing: TimingBudget | None = None
) -> Expectations:
    """Read an `expect` object (also what `assert_conforms(..., expect={...})` takes).

    `timing` (the script's) gives the budgets `value` does not set, and their severity.
    """
    if not isinstance(value, dict):
        raise _error(where, "expected an object")
    _keys(
        value,
        {
            "complete",
            "cites_account",
            "cites_kinds",
            "no_citations",
            "no_old_checkpoint",
            "max_first_text_s",
            "max_turn_s",
        },
        where,
    )
    timing = timing or TimingBudget()
    kinds = value.get("cites_kinds", [])
    if not isinstance(kinds, list) or not all(isinstance(kind, str) for kind in kinds):
        raise _error(f"{where}.cites_kinds", "expected a list of target kinds")
    unknown = [kind for kind in kinds if kind not in TARGET_KINDS]
    if unknown:
        raise _error(
            f"{where}.cites_kinds",
            f"unknown kind(s) {', '.join(map(repr, unknown))}; "
            f"the kinds are {', '.join(TARGET_KINDS)}",
        )
    return Expectations(
        complete=_bool(value.get("complete"), f"{where}.complete"),
        cites_account=_bool(value.get("cites_account"), f"{where}.cites_account"),
        cites_kinds=tuple(kinds),
        no_citations=_bool(value.get("no_citations"), f"{where}.no_citations"),
        no_old_checkpoint=bool(_bool(value.get("no_old_checkpoint"), f"{where}.no_old_checkpoint")),
        max_first_text_s=_seconds(value.get("max_first_text_s"), f"{where}.max_first_text_s")
        or timing.max_first_text_s,
        max_turn_s=_seconds(value.get("max_turn_s"), f"{where}.max_turn_s") or timing.max_turn_s,
        timing_severity=timing.severity,
    )


def _prompt(value: object, index: int, seen: set[str], timing: TimingBudget | None) -> Prompt:
    where = f"prompts[{index}]"
    if not isinstance(value, dict):
        raise _error(where, "expected an object with a 'message'")
    _keys(value, {"id", "message", "scenario", "continue", "expect"}, where)
    prompt_id = value.get("id", f"p{index + 1}")
    if not isinstance(prompt_id, str) or not _ID.fullmatch(prompt_id):
        raise _error(
            f"{where}.id",
            "use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
        )
    if prompt_id in seen:
        raise _error(f"{where}.id", f"{prompt_id!r} is used twice")
    seen.add(prompt_id)
    message = value.get("message")
    if not isinstance(message, str) or not message.strip():
        raise _error(f"{where}.message", "expected a non-empty string")
    scenario = value.get("scenario")
    if scenario is not None and not _is_scenario_name(scenario):
        raise _error(
            f"{where}.scenario",
            f"expected a scenario name ({_shown(scenario)} is not one): letters, digits, "
            "'-', '_' and '.', starting with a letter or digit",
        )
    continue_session = _bool(value.get("continue", False), f"{where}.continue")
    if continue_session and index == 0:
        raise _error(f"{where}.continue", "the first prompt has no session to continue")
    expect = value.get("expect")
    if expect is None and timing is not None:
        expect = {}  # the script's budgets apply to every prompt
    return Prompt(
        id=prompt_id,
        message=message,
        scenario=scenario,
        continue_session=bool(continue_session),
        expect=None if expect is None else parse_expectations(expect, f"{where}.expect", timing),
    )


def parse_script(data: object) -> Script:
    """A script from its JSON value. Raises `ScriptFormatError`."""
    if not isinstance(data, dict):
        raise ScriptFormatError('expected a JSON object with a "prompts" list')
    _keys(data, {"name", "timing", "prompts"}, "script", at="")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise _error("name", "expected a string")
    timing = None if data.get("timing") is None else parse_timing(data["timing"])
    prompts = data.get("prompts")
    if not isinstance(prompts, list) or not prompts:
        raise _error("prompts", "expected a non-empty list")
    seen: set[str] = set()
    return Script(
        tuple(_prompt(value, i, seen, timing) for i, value in enumerate(prompts)), name, timing
    )


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
        return parse_script(data)
    except ScriptFormatError as error:
        line, column = _line_and_column(text, _place(text, _steps(error.where)))
        raise ScriptFormatError(
            f"{path}: line {line} column {column}: {error}",
            where=error.where,
            line=line,
            column=column,
        ) from None


def _is_scenario_name(value: object) -> bool:
    """Whether `value` is a name the reference server's scenarios may have.

    The server's own rule, not a copy: `Scenario` checks every name with this
    pattern, so a script names only what a server could play, and nothing that
    cannot go in a header. (Imported here, not above: reading a script does not
    load the testing kit until a prompt names a scenario.)
    """
    from ..testing import is_scenario_name

    return is_scenario_name(value)


def _shown(value: object) -> str:
    """A bad value as the message shows it: a string's repr (controls escaped), cut short."""
    shown = repr(value) if isinstance(value, str) else type(value).__name__
    return shown if len(shown) <= 80 else f"{shown[:77]}..."


# Finding a place in the text: the errors name places as `where` strings, which the
# parser builds from the format's own keys (never a key the script made up) and indexes.
_STEP = re.compile(r"([A-Za-z_]+)|\[(\d+)\]")
_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between tokens
_DECODER = json.JSONDecoder()


def _steps(where: str) -> list[str | int]:
    """`"prompts[1].expect"` as the keys and indexes to it: `["prompts", 1, "expect"]`."""
    return [key or int(index) for key, index in _STEP.findall(where)]


def _skip(text: str, at: int) -> int:
    """The offset of the next token at or after `at`."""
    space = _SPACE.match(text, at)
    return at if space is None else space.end()


def _place(text: str, steps: list[str | int]) -> int:
    """The offset in `text` (valid JSON) of the value at `steps`, or of the nearest above it."""
    at = _skip(text, 0)
    for step in steps:
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


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based, counting characters, as `json`'s own errors do."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
