"""What a client should assemble from a scenario: the hook end-to-end tests assert against.

Where things are: `expected_turn` reads the scenario's own steps as a client
reads the wire, so it cannot drift from what the server sends.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .. import DEFAULT_WIRE, WireFormat
from ._faults import status_fault
from ._scenario import Scenario
from ._steps import Drop, Encoded, Event, Pause, Repeat
from ._turn import WireCitation


@dataclass(frozen=True)
class ExpectedTurn:
    """The turn a conforming client assembles from `scenario` (wire dicts, targets included)."""

    scenario: str
    status: int = 200
    text: str = ""
    citations: tuple[WireCitation, ...] = ()  # the summary's: de-duplicated, final targets
    inline_citations: tuple[WireCitation, ...] = ()  # as streamed, each with its target then
    final_targets: dict[str, dict[str, object] | None] = field(default_factory=dict)
    message: dict[str, object] | None = None  # the raw final message (no targets; its id varies)
    complete: bool = False  # whether `done` arrives
    fault: str | None = None  # the fault's kind, e.g. "drop", "stall", "http_error"
    error: dict[str, object] | None = None  # the in-band or status error body's error object
    retry_after: float | None = None
    unknown_events: tuple[tuple[str, object], ...] = ()  # (event name, data)

    def target_for(self, source: str) -> dict[str, object] | None:
        """The target `source` has in the server's registry at the end of the turn.

        None: untyped, or never written. For a source a complete turn cited, it
        is the summary's target, and so what a client's `Turn.target_for` gives.
        """
        return self.final_targets.get(source)


def expected_turn(
    scenario: Scenario,
    *,
    wire: WireFormat = DEFAULT_WIRE,
    idle_timeout: float = 5.0,
    token: str = "",
) -> ExpectedTurn:
    """What a client reading `scenario` with `idle_timeout` (seconds) should end up with.

    A pause longer than `idle_timeout` ends the client's view there, as its idle
    timeout would; so does a flood (an endless line, an oversized event, a bomb,
    a trickle, keep-alives forever), as its limits or deadline would. Malformed
    events are bytes the client cannot read, so they add nothing here; whether
    a client skips them or stops is the client's rule. `token` is the bearer
    token the client sends, which an `EchoToken` fault's message holds (as sent:
    the client shows it blanked).
    """
    fault = scenario.fault
    if (refusal := status_fault(fault, token)) is not None:
        assert fault is not None
        return ExpectedTurn(
            scenario=scenario.name,
            status=refusal.status,
            fault=fault.kind,
            error={"type": refusal.error_type, "message": refusal.message},
            retry_after=refusal.retry_after,
        )
    played = scenario.play()
    known = set(dataclasses.asdict(wire.events).values())
    text: list[str] = []
    inline: list[WireCitation] = []
    citations: tuple[WireCitation, ...] = ()
    unknown: list[tuple[str, object]] = []
    message: dict[str, object] | None = None
    error: dict[str, object] | None = None
    complete = False
    for step in scenario.steps(session_id="expected", wire=wire, token=token):
        if isinstance(step, Encoded):
            step = step.step
        if isinstance(step, (Drop, Repeat)) or (
            isinstance(step, Pause) and step.seconds > idle_timeout
        ):
            break
        if not isinstance(step, Event):
            continue
        data = step.data
        assert isinstance(data, dict)
        if step.name == wire.events.text:
            text.append(data[wire.text_key])
        elif step.name == wire.events.citation:
            inline.append(data[wire.citation_key])
        elif step.name == wire.events.citations_summary:
            citations = tuple(data[wire.citations_key])
        elif step.name == wire.events.message:
            message = data
        elif step.name == wire.events.error:
            error = data[wire.error_key]
            break
        elif step.name == wire.events.done:
            complete = True
        elif step.name not in known:
            unknown.append((step.name, data))
    return ExpectedTurn(
        scenario=scenario.name,
        text="".join(text),
        citations=citations,
        inline_citations=tuple(inline),
        final_targets=played.final_targets,
        message=message,
        complete=complete,
        fault=None if fault is None else fault.kind,
        error=error,
        unknown_events=tuple(unknown),
    )
