"""`Scenario`: a named, scripted turn, optionally with a fault. Plain data.

Integrators build their own and register them on a server::

    server.register(Scenario(
        "two-cards", "Both credit cards behind one label.",
        script=(ExecuteSql(rows=(...)), Say("..."), Cite("silvia://your-account/credit-card")),
    ))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .. import WireFormat
from ._faults import EchoToken, Fault, HttpError, status_fault
from ._script import Checkpoint, PriorTurn, ScriptItem
from ._steps import Step
from ._turn import PlayedTurn, play, turn_steps

SCENARIO_HEADER = "x-silvia-scenario"
"""Request header naming the scenario to play (a testing-kit convention, not the wire's)."""

SCENARIO_COMMAND = "/scenario"
"""A message starting `/scenario <name>` picks that scenario when no header does."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def is_scenario_name(name: object) -> bool:
    """Whether `name` can name a scenario: letters, digits, `-`, `_` and `.`, a letter or
    digit first (what `Scenario` checks, and what a QA script may name)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def commanded(message: object, command: str) -> str | None:
    """NAME when `message` is a string starting `command NAME` (`/scenario demo`), else None."""
    words = message.split(maxsplit=2) if isinstance(message, str) else []
    return words[1] if len(words) >= 2 and words[0] == command else None


class Rewrite(Protocol):
    """Deliberately non-conforming output, for checking a checker (`_broken.py`'s scenarios).

    `turn` rewrites the turn the rules derived (what is streamed and stored
    alike); `steps` rewrites the streamed body only, after any fault. Neither
    may mutate what it is given.
    """

    def turn(self, turn: PlayedTurn) -> PlayedTurn:
        """The turn to play instead of `turn` (a new one: `turn` is left as it is)."""

    def steps(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The body's steps to stream instead of `steps` (a new list)."""


@dataclass(frozen=True)
class Scenario:
    """A scripted turn the reference server plays when a request selects it by `name`.

    `history` is seeded into a session that has no messages yet, before the
    turn; `checkpoint` makes the turn a resumed one; `fault` breaks it;
    `rewrite` makes it break the server's own rules (never set on the library's
    good scenarios).
    Construction plays the script once, so a bad script fails here, not mid-request.
    """

    name: str
    description: str
    script: tuple[ScriptItem, ...] = ()
    checkpoint: Checkpoint | None = None
    history: tuple[PriorTurn, ...] = ()
    fault: Fault | None = None
    rewrite: Rewrite | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "script", tuple(self.script))
        object.__setattr__(self, "history", tuple(self.history))
        if not is_scenario_name(self.name):
            raise ValueError(f"scenario name {self.name!r}: use letters, digits, '-', '_', '.'")
        if not self.description.strip() or "\n" in self.description:
            raise ValueError(f"scenario {self.name!r} needs a one-line description")
        self.play()
        for prior in self.history:
            play(prior.script)

    def play(self) -> PlayedTurn:
        """The turn as the server streams it (a fresh message id each time)."""
        turn = play(self.script, self.checkpoint)
        return turn if self.rewrite is None else self.rewrite.turn(turn)

    def steps(
        self,
        *,
        session_id: str,
        wire: WireFormat,
        pace: float = 0.0,
        turn: PlayedTurn | None = None,
        on_start: Callable[[], None] | None = None,
        on_complete: Callable[[], None] | None = None,
        token: str = "",
    ) -> list[Step]:
        """The streamed body of this scenario's turn, fault included.

        `turn` is the played turn to stream (played afresh if not given), so a
        caller that stores the turn streams the very same one; `token` is the
        request's bearer token, for a fault that echoes it. Not for a scenario
        that answers an error status (`HttpError`), before any body.
        """
        if (refusal := status_fault(self.fault)) is not None:
            raise ValueError(f"scenario {self.name!r} answers {refusal.status}, not a stream")
        steps = turn_steps(
            self.play() if turn is None else turn,
            session_id=session_id,
            wire=wire,
            pace=pace,
            on_start=on_start,
            on_complete=on_complete,
        )
        if isinstance(self.fault, EchoToken):
            steps = self.fault.apply(steps, wire, token)
        elif self.fault is not None and not isinstance(self.fault, HttpError):
            steps = self.fault.apply(steps, wire)
        return steps if self.rewrite is None else self.rewrite.steps(steps, wire)
