"""Broken scenarios: a server that breaks one of the rules `silvia_client.qa` checks, each.

Where things are: the scenarios are data, `scenarios/broken.json`, read as the
library is (`_library.read_library`); `BROKEN_SCENARIOS` (played and listed,
but not in `SCENARIOS`, which holds only good turns and faults) and
`BROKEN_RULES`, the rule each breaks (named `broken-<rule id>`). Each starts
from a derived turn and breaks it with a fault or with a `Rewrite`
(`Scenario.rewrite`) of the turn or of the streamed steps alone: the file's
`rewrite` names one of `_REWRITES` below and gives its argument. Providers sit
in odd places on purpose, so tests can show no QA output carries one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from types import MappingProxyType
from typing import Any

from .. import WireFormat
from ._library import SCENARIOS, read_library
from ._scenario import Scenario
from ._steps import Event, Step
from ._turn import PlayedTurn, TextDelta, WireCitation


@dataclass(frozen=True)
class Breakage:
    """A `Rewrite` made of two plain functions; either may be left out."""

    on_turn: Callable[[PlayedTurn], PlayedTurn] = lambda turn: turn
    on_steps: Callable[[list[Step], WireFormat], list[Step]] = lambda steps, wire: steps

    def turn(self, turn: PlayedTurn) -> PlayedTurn:
        return self.on_turn(turn)

    def steps(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        return self.on_steps(list(steps), wire)


# -- rewriting a played turn (never in place: the library's turns are shared) --


def _with_target(citation: WireCitation, target: object) -> WireCitation:
    out = {key: value for key, value in citation.items() if key != "target"}
    if target is not None:
        out["target"] = copy.deepcopy(target)
    return out


def _retarget(targets: Mapping[str, object]) -> Callable[[PlayedTurn], PlayedTurn]:
    """Every citation of each named source, streamed and summarised, carries that raw target."""

    def fix(citation: WireCitation) -> WireCitation:
        source = str(citation.get("source"))
        return _with_target(citation, targets[source]) if source in targets else citation

    def rewrite(turn: PlayedTurn) -> PlayedTurn:
        return replace(
            turn,
            stream=tuple(
                item if isinstance(item, TextDelta) else fix(item) for item in turn.stream
            ),
            summary=tuple(fix(citation) for citation in turn.summary),
        )

    return rewrite


def _retarget_streamed(source: str, nth: int, target: object) -> Callable[[PlayedTurn], PlayedTurn]:
    """The `nth` streamed citation of `source` (from 0) carries `target`; nothing else changes."""

    def rewrite(turn: PlayedTurn) -> PlayedTurn:
        stream: list[TextDelta | WireCitation] = []
        seen = 0
        for item in turn.stream:
            if not isinstance(item, TextDelta) and item.get("source") == source:
                if seen == nth:
                    item = _with_target(item, target)
                seen += 1
            stream.append(item)
        return replace(turn, stream=tuple(stream))

    return rewrite


def _drop_from_summary(source: str) -> Callable[[PlayedTurn], PlayedTurn]:
    def rewrite(turn: PlayedTurn) -> PlayedTurn:
        summary = tuple(row for row in turn.summary if row.get("source") != source)
        return replace(turn, summary=summary)

    return rewrite


def _targets_in_message(turn: PlayedTurn) -> PlayedTurn:
    """The final message's citations carry their targets, as the stream's do."""
    message = copy.deepcopy(turn.message)
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        for citation in block.get("citations", ()) if isinstance(block, dict) else ():
            target = turn.final_targets.get(str(citation.get("source")))
            if target is not None:
                citation["target"] = copy.deepcopy(target)
    return replace(turn, message=message)


# -- rewriting the streamed steps only ----------------------------------------


def _untyped_in_stream(source: str) -> Callable[[list[Step], WireFormat], list[Step]]:
    """`source` streams with no target (events and summary), while the stored turn keeps it."""

    def untyped(event: Event, wire: WireFormat) -> Event:
        data: Any = event.data
        if event.name == wire.events.citation:
            row = data[wire.citation_key]
            if row.get("source") == source:
                return Event(event.name, {wire.citation_key: _with_target(row, None)})
        elif event.name == wire.events.citations_summary:
            rows = [
                _with_target(row, None) if row.get("source") == source else row
                for row in data[wire.citations_key]
            ]
            return Event(event.name, {wire.citations_key: rows})
        return event

    def rewrite(steps: list[Step], wire: WireFormat) -> list[Step]:
        return [untyped(step, wire) if isinstance(step, Event) else step for step in steps]

    return rewrite


def _session_after_first_text(steps: list[Step], wire: WireFormat) -> list[Step]:
    """The `session` event comes second, after the first piece of text."""
    names = wire.events
    first = next(i for i, s in enumerate(steps) if isinstance(s, Event) and s.name == names.session)
    text = next(i for i, s in enumerate(steps) if isinstance(s, Event) and s.name == names.text)
    out = list(steps)
    out[first], out[text] = out[text], out[first]
    return out


# -- the scenarios --------------------------------------------------------------

_REWRITES: dict[str, Callable[[Any], Breakage]] = {
    "retarget": lambda targets: Breakage(on_turn=_retarget(targets)),
    "retarget_streamed": lambda one: Breakage(
        on_turn=_retarget_streamed(one["source"], one["nth"], one["target"])
    ),
    "drop_from_summary": lambda source: Breakage(on_turn=_drop_from_summary(source)),
    "targets_in_message": lambda _: Breakage(on_turn=_targets_in_message),
    "untyped_in_stream": lambda source: Breakage(on_steps=_untyped_in_stream(source)),
    "session_after_first_text": lambda _: Breakage(on_steps=_session_after_first_text),
}


def _rewrite(data: Mapping[str, Any]) -> Breakage:
    """The `Breakage` a scenario's `rewrite` object names: `{kind: its argument}`."""
    if len(data) != 1 or next(iter(data)) not in _REWRITES:
        raise ValueError(f"a rewrite is one of {', '.join(_REWRITES)}: {sorted(data)}")
    ((kind, argument),) = data.items()
    return _REWRITES[kind](argument)


def broken_scenarios() -> tuple[Scenario, ...]:
    """A fresh copy of the broken scenarios, one per QA rule, in the rule table's order."""
    text = resources.files(__package__).joinpath("scenarios/broken.json").read_text("utf-8")
    return read_library([("broken.json", text)], above=SCENARIOS, rewrite=_rewrite)


BROKEN_SCENARIOS: MappingProxyType[str, Scenario] = MappingProxyType(
    {scenario.name: scenario for scenario in broken_scenarios()}
)
"""The broken scenarios by name, read-only. Not part of `SCENARIOS`."""

BROKEN_RULES: MappingProxyType[str, str] = MappingProxyType(
    {name: name.removeprefix("broken-") for name in BROKEN_SCENARIOS}
)
"""For each broken scenario, the id of the QA rule it breaks (and the only one)."""
