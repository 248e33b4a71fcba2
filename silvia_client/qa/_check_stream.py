"""The stream itself: `stream-complete`, `event-order` and `events-well-formed`.

Not about targets: that `done` arrived, that `session` came first and a turn
has one session, summary and message, and that every known event's data has
its documented shape (a `MalformedEvent`, or a summary row that is not a
citation, is a finding).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..chat import CitationsSummaryEvent, MalformedEvent
from ._facts import Facts
from ._rule import Problem

__all__ = ["check_event_order", "check_events_well_formed", "check_stream_complete"]


# -- stream-complete -------------------------------------------------------------------


def check_stream_complete(facts: Facts) -> Iterator[Problem]:
    observation = facts.observation
    if not observation.complete:
        yield Problem(
            observation.failure or "`done` never arrived",
            {"events": len(observation.events), "request_id": observation.request_id},
        )


# -- event-order -----------------------------------------------------------------------


def check_event_order(facts: Facts) -> Iterator[Problem]:
    names = facts.observation.wire.events
    sent = [event.name for event in facts.observation.events]
    if sent[0] != names.session:
        at = sent.index(names.session) + 1 if names.session in sent else None
        yield Problem(
            f"the first event is `{sent[0]}`, not `{names.session}`",
            {"first": sent[0], "session_event": at},
        )
    for name in (names.session, names.citations_summary, names.message):
        if sent.count(name) > 1:
            yield Problem(f"{sent.count(name)} `{name}` events; a turn has one", {"event": name})


# -- events-well-formed ----------------------------------------------------------------


def check_events_well_formed(facts: Facts) -> Iterator[Problem]:
    observation = facts.observation
    for number, sent in enumerate(observation.events, start=1):
        event = sent.event
        if isinstance(event, MalformedEvent):
            yield Problem(
                f"event {number} (`{sent.name}`) is not its documented shape: {event.reason}",
                {"event": number, "name": sent.name, "reason": event.reason},
            )
        elif isinstance(event, CitationsSummaryEvent):
            for error in event.errors:
                yield Problem(
                    f"event {number} (`{sent.name}`): row {error.index} is not a citation: "
                    f"{error.reason}",
                    {"event": number, "row": error.index, "reason": error.reason},
                )
    if not observation.raw:
        for error in observation.turn.citation_errors:
            yield Problem(
                f"summary row {error.index} is not a citation: {error.reason}",
                {"row": error.index, "reason": error.reason},
            )
