"""Checking recorded turns: every rule over a `Recording`, with no server at all.

`observe_recording(recording)` replays the turn through the SDK's own client
(`Recording.client()`, byte for byte) into the observer, so the rules see
exactly what the server sent when it was recorded, and the recorded reload
when there is one. `check_recordings({name: recording})` does so for each and
returns a `RunResult`, so `silvia qa check FILE...` prints and writes the same
reports, and exits with the same statuses, as `silvia qa run`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .. import DEFAULT_WIRE
from .runner import PromptResult, RunResult
from .script import Prompt, Script

if TYPE_CHECKING:
    from ..testing import Recording
    from .observe import Observation

__all__ = ["check_recordings", "observe_recording", "recorded_prompt"]

_NOT_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def _id(name: str, taken: set[str]) -> str:
    """A prompt id from a recording's name: the script's id alphabet, unique in the run."""
    base = _NOT_ID.sub("-", name).strip("-._")[:60] or "recording"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}-{number}"
    taken.add(candidate)
    return candidate


def _body_field(recording: Recording, name: str) -> str | None:
    body = recording.request.body
    value = body.get(name) if isinstance(body, dict) else None
    return value if isinstance(value, str) else None


def recorded_prompt(recording: Recording, prompt_id: str) -> Prompt:
    """The prompt a recording answered: its message, as the recorded request sent it."""
    return Prompt(id=prompt_id, message=_body_field(recording, DEFAULT_WIRE.message_field) or "")


def observe_recording(recording: Recording) -> Observation:
    """What the server sent in `recording`, observed as it was live (and its reload)."""
    from .observe import observe

    session_id = _body_field(recording, DEFAULT_WIRE.session_id_field)
    message = _body_field(recording, DEFAULT_WIRE.message_field) or ""
    with recording.client() as client:
        return observe(client, message or "(recorded)", session_id=session_id)


def check_recordings(
    recordings: Mapping[str, Recording] | Iterable[tuple[str, Recording]],
    *,
    target: str | None = None,
) -> RunResult:
    """Every rule over each recorded turn, as a run (prompt ids from the names, made unique)."""
    from .checker import check

    taken: set[str] = set()
    results = []
    named = recordings.items() if isinstance(recordings, Mapping) else recordings
    for name, recording in named:
        prompt = recorded_prompt(recording, _id(name, taken))
        observation = observe_recording(recording)
        results.append(PromptResult(prompt, observation, check(observation)))
    script = Script(tuple(result.prompt for result in results), name="recorded turns")
    where = target or f"{len(results)} recording(s), no server"
    return RunResult.of(script, where, results)
