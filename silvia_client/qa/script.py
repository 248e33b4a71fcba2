"""The QA script format: one JSON file of prompts, each with optional expectations.

JSON because it is in the standard library of every Python this SDK supports
(`tomllib` is 3.11+) and every QA tool can write it. The whole format::

    {
      "name": "Staging smoke test",
      "prompts": [
        {
          "id": "checking",
          "message": "How much is in checking?",
          "scenario": "account",
          "continue": false,
          "expect": {"complete": true, "cites_account": true}
        }
      ]
    }

- `name` (optional): the script's name, used in the reports.
- `prompts` (required, non-empty): in order. Each prompt has:
  - `message` (required): the user's message, sent as is;
  - `id` (optional): 1 to 64 letters, digits, `-`, `_` or `.`, unique; by
    default `p1`, `p2`, ... (the reports name prompts by it);
  - `scenario` (optional): the reference server's scenario to play, sent as
    the `x-silvia-scenario` header; a real server ignores it, so one script
    drives the reference server and staging alike;
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
      the warning it is otherwise.

Unknown keys are errors, so a typo such as `"expects"` is caught rather than
ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from ..citations import TargetKind

__all__ = [
    "Expectations",
    "Prompt",
    "Script",
    "ScriptFormatError",
    "load_script",
    "parse_expectations",
    "parse_script",
]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TARGET_KINDS: tuple[str, ...] = get_args(TargetKind)


class ScriptFormatError(ValueError):
    """A QA script that is not in the format (the message says where)."""


@dataclass(frozen=True)
class Expectations:
    """What one prompt's turn should show, beyond the server's rules. None: not checked."""

    complete: bool | None = None
    cites_account: bool | None = None
    cites_kinds: tuple[str, ...] = ()
    no_citations: bool | None = None
    no_old_checkpoint: bool = False

    def to_dict(self) -> dict[str, object]:
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


def _keys(value: Mapping[str, object], allowed: set[str], where: str) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ScriptFormatError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )


def _bool(value: object, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ScriptFormatError(f"{where}: expected true or false")


def parse_expectations(value: object, where: str = "expect") -> Expectations:
    """Read an `expect` object (also what `assert_conforms(..., expect={...})` takes)."""
    if not isinstance(value, dict):
        raise ScriptFormatError(f"{where}: expected an object")
    _keys(
        value,
        {"complete", "cites_account", "cites_kinds", "no_citations", "no_old_checkpoint"},
        where,
    )
    kinds = value.get("cites_kinds", [])
    if not isinstance(kinds, list) or not all(isinstance(kind, str) for kind in kinds):
        raise ScriptFormatError(f"{where}.cites_kinds: expected a list of target kinds")
    unknown = [kind for kind in kinds if kind not in TARGET_KINDS]
    if unknown:
        raise ScriptFormatError(
            f"{where}.cites_kinds: unknown kind(s) {', '.join(map(repr, unknown))}; "
            f"the kinds are {', '.join(TARGET_KINDS)}"
        )
    return Expectations(
        complete=_bool(value.get("complete"), f"{where}.complete"),
        cites_account=_bool(value.get("cites_account"), f"{where}.cites_account"),
        cites_kinds=tuple(kinds),
        no_citations=_bool(value.get("no_citations"), f"{where}.no_citations"),
        no_old_checkpoint=bool(_bool(value.get("no_old_checkpoint"), f"{where}.no_old_checkpoint")),
    )


def _prompt(value: object, index: int, seen: set[str]) -> Prompt:
    where = f"prompts[{index}]"
    if not isinstance(value, dict):
        raise ScriptFormatError(f"{where}: expected an object with a 'message'")
    _keys(value, {"id", "message", "scenario", "continue", "expect"}, where)
    prompt_id = value.get("id", f"p{index + 1}")
    if not isinstance(prompt_id, str) or not _ID.fullmatch(prompt_id):
        raise ScriptFormatError(
            f"{where}.id: use 1 to 64 letters, digits, '-', '_' or '.', starting with a "
            "letter or digit"
        )
    if prompt_id in seen:
        raise ScriptFormatError(f"{where}.id: {prompt_id!r} is used twice")
    seen.add(prompt_id)
    message = value.get("message")
    if not isinstance(message, str) or not message.strip():
        raise ScriptFormatError(f"{where}.message: expected a non-empty string")
    scenario = value.get("scenario")
    if scenario is not None and (not isinstance(scenario, str) or not scenario.strip()):
        raise ScriptFormatError(f"{where}.scenario: expected a scenario name")
    continue_session = _bool(value.get("continue", False), f"{where}.continue")
    if continue_session and index == 0:
        raise ScriptFormatError(f"{where}.continue: the first prompt has no session to continue")
    expect = value.get("expect")
    return Prompt(
        id=prompt_id,
        message=message,
        scenario=scenario,
        continue_session=bool(continue_session),
        expect=None if expect is None else parse_expectations(expect, f"{where}.expect"),
    )


def parse_script(data: object) -> Script:
    """A script from its JSON value. Raises `ScriptFormatError`."""
    if not isinstance(data, dict):
        raise ScriptFormatError('expected a JSON object with a "prompts" list')
    _keys(data, {"name", "prompts"}, "script")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ScriptFormatError("name: expected a string")
    prompts = data.get("prompts")
    if not isinstance(prompts, list) or not prompts:
        raise ScriptFormatError("prompts: expected a non-empty list")
    seen: set[str] = set()
    return Script(tuple(_prompt(value, i, seen) for i, value in enumerate(prompts)), name)


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
    return parse_script(data)
