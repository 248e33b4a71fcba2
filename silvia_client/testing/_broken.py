"""Broken scenarios: a server that breaks one of the rules `silvia_client.qa` checks, each.

Where things are: `BROKEN_SCENARIOS` (played and listed, but not in
`SCENARIOS`, which holds only good turns and faults) and `BROKEN_RULES`, the
rule each breaks (named `broken-<rule id>`). Each starts from a derived turn
and breaks it with a `Rewrite` (`Scenario.rewrite`) of the turn or of the
streamed steps alone. Providers sit in odd places on purpose, so tests can show
no QA output carries one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from .. import WireFormat
from ._faults import EndWithoutDone, SendMalformed
from ._library import SCENARIOS
from ._scenario import Scenario
from ._script import Cite, ExecuteSql, Say
from ._steps import Event, Step
from ._turn import PlayedTurn, TextDelta, WireCitation

__all__ = ["BROKEN_RULES", "BROKEN_SCENARIOS", "Breakage", "broken_scenarios"]

# The demo's accounts and sources (`scenarios/demo.json`), which these scenarios break.
CHECKING_SRC = "silvia://your-account/checking"
CARDS_SRC = "silvia://your-account/credit-card"
AAPL_SRC = "silvia://market-data/finnhub/AAPL"
IRA_LIMITS_URL = "https://www.irs.gov/retirement-plans/ira-contribution-limits"
CARD_ONE = "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"
CARD_TWO = "Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2"
BROKERAGE = "5b3c9f0e-2a41-4d8e-b6f7-93c1e0a2d4f8"


@dataclass(frozen=True)
class Breakage:
    """A `Rewrite` made of two plain functions; either may be left out."""

    on_turn: Callable[[PlayedTurn], PlayedTurn] | None = None
    on_steps: Callable[[list[Step], WireFormat], list[Step]] | None = None

    def turn(self, turn: PlayedTurn) -> PlayedTurn:
        return turn if self.on_turn is None else self.on_turn(turn)

    def steps(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        return steps if self.on_steps is None else self.on_steps(list(steps), wire)


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

_DEMO = SCENARIOS["demo"].script
_POOLING = SCENARIOS["pooling"].script


def _broken(rule: str, description: str, **fields: object) -> Scenario:
    fields.setdefault("script", _DEMO)
    return Scenario(f"broken-{rule}", description, **fields)  # type: ignore[arg-type]


def broken_scenarios() -> tuple[Scenario, ...]:
    """A fresh copy of the broken scenarios, one per QA rule, in the rule table's order."""
    return (
        _broken(
            "target-parses",
            "Targets the parser rejects (an id that is a number, an empty entry, an unknown kind).",
            rewrite=Breakage(
                on_turn=_retarget(
                    {
                        CHECKING_SRC: {"kind": "account", "accountId": 4210, "provider": "plaid"},
                        CARDS_SRC: {
                            "kind": "accounts",
                            "accounts": [
                                {"accountId": CARD_ONE, "provider": "plaid"},
                                {"accountId": None, "provider": "snaptrade"},
                            ],
                        },
                        AAPL_SRC: {"kind": "snaptrade", "ticker": "AAPL", "provider": "SnapTrade"},
                    }
                )
            ),
        ),
        _broken(
            "target-fits-source",
            "A ticker that is not its source's, and a government URL whose target has url null.",
            rewrite=Breakage(
                on_turn=_retarget(
                    {
                        AAPL_SRC: {"kind": "market_data", "ticker": "MSFT"},
                        IRA_LIMITS_URL: {"kind": "tax_reference", "url": None},
                    }
                )
            ),
        ),
        _broken(
            "account-id-rule",
            "Account targets whose ids the doc's rule rejects (all digits; too short).",
            rewrite=Breakage(
                on_turn=_retarget(
                    {
                        CHECKING_SRC: {
                            "kind": "account",
                            "accountId": "12345678901234567890",
                            "provider": "plaid",
                        },
                        CARDS_SRC: {
                            "kind": "accounts",
                            "accounts": [
                                {"accountId": CARD_ONE, "provider": "plaid"},
                                {"accountId": "acct-1234", "provider": "plaid"},
                            ],
                        },
                    }
                )
            ),
        ),
        _broken(
            "one-meaning-per-source",
            "A label's second citation streams one card instead of both: its accounts shrink.",
            script=_POOLING,
            rewrite=Breakage(
                on_turn=_retarget_streamed(
                    CARDS_SRC, 1, {"kind": "account", "accountId": CARD_TWO, "provider": "plaid"}
                )
            ),
        ),
        _broken(
            "summary-agrees",
            "The summary leaves out a source the turn streamed (the ticker).",
            rewrite=Breakage(on_turn=_drop_from_summary(AAPL_SRC)),
        ),
        _broken(
            "reload-agrees",
            "Checking streams untyped but is stored with its target: the reload disagrees.",
            rewrite=Breakage(on_steps=_untyped_in_stream(CHECKING_SRC)),
        ),
        _broken(
            "message-has-no-targets",
            "The raw final message's citations carry targets.",
            rewrite=Breakage(on_turn=_targets_in_message),
        ),
        _broken(
            "no-vendor-names",
            "A vendor name in the answer text, an account label and a quoted row.",
            script=(
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "SnapTrade brokerage",
                            "value": "24370.00",
                            "institution": "Linked via Plaid",
                            "source": "snaptrade",
                            "source_account_id": BROKERAGE,
                        },
                    )
                ),
                Say("Your brokerage account, linked through Plaid, holds $24,370."),
                Cite("silvia://your-account/snaptrade-brokerage"),
            ),
        ),
        _broken(
            "stream-complete",
            "The whole turn, then the stream ends without `done`.",
            fault=EndWithoutDone(),
        ),
        _broken(
            "event-order",
            "The `session` event comes after the first piece of text instead of first.",
            rewrite=Breakage(on_steps=_session_after_first_text),
        ),
        _broken(
            "events-well-formed",
            "A `text` event whose data is JSON of the wrong shape, mid-turn.",
            fault=SendMalformed(event="text", data='{"text": 42}', after_events=12),
        ),
    )


BROKEN_SCENARIOS: MappingProxyType[str, Scenario] = MappingProxyType(
    {scenario.name: scenario for scenario in broken_scenarios()}
)
"""The broken scenarios by name, read-only. Not part of `SCENARIOS`."""

BROKEN_RULES: MappingProxyType[str, str] = MappingProxyType(
    {name: name.removeprefix("broken-") for name in BROKEN_SCENARIOS}
)
"""For each broken scenario, the id of the QA rule it breaks (and the only one)."""
