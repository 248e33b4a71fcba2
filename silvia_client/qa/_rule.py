"""What a rule reads, is and finds: `Facts`, `Rule`, `Problem`, `Finding`, `Severity`.

A rule's check (`_checks.py`, named in `rules.py`'s table) reads a `Facts` and yields
`Problem`s: a message and the raw evidence; `checker.py` makes each a redacted `Finding`.

`Facts` is an observation laid out for the rules: every cited row with its raw and
parsed target, read from the raw JSON the server sent (citation events, the summary,
the reloaded message), not from the SDK's typed reading, so a target the parser
rejects is still there to be reported, and a row is never dropped for a bad field
elsewhere (that is `events-well-formed`'s to report). A row needs only a string
`source` to be a row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .._text import terminal_text
from ..citations import CitationTarget, parse_citation_target
from ._observation import NOT_JSON, Observation

Severity: TypeAlias = Literal["error", "warning"]


def canonical(value: object) -> str:
    """A stable text form of a JSON value, for comparing and grouping."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, default=repr)


@dataclass(frozen=True, slots=True)
class CitedRow:
    """One citation row as the server sent it."""

    where: str  # e.g. "event 7 (citation)", "citations_summary[2]", "session citations[0]"
    source: str
    raw: dict[str, object]
    target_raw: object  # the `target` value; None when absent or null
    target: CitationTarget | None  # parsed; None when absent, null, or rejected

    @property
    def parses(self) -> bool:
        return self.target_raw is None or self.target is not None

    @property
    def target_key(self) -> str:
        """Equal for rows whose targets mean the same (untyped rows share one key)."""
        if self.target_raw is None:
            return "none"
        if self.target is not None:
            return canonical(self.target.to_wire())
        return "unparseable " + canonical(self.target_raw)

    @property
    def text_key(self) -> tuple[str, str, str]:
        """What the row cites, target aside: source, title, quoted text."""
        return (
            self.source,
            canonical(self.raw.get("title")),
            canonical(self.raw.get("cited_text")),
        )


def _row(where: str, value: object) -> CitedRow | None:
    if not isinstance(value, dict):
        return None
    source = value.get("source")
    if not isinstance(source, str):
        return None
    target_raw = value.get("target")
    target = None if target_raw is None else parse_citation_target(target_raw)
    return CitedRow(where, source, value, target_raw, target)


def _rows(prefix: str, values: object) -> tuple[CitedRow, ...]:
    if not isinstance(values, list):
        return ()
    rows = (_row(f"{prefix}[{index}]", value) for index, value in enumerate(values))
    return tuple(row for row in rows if row is not None)


@dataclass(frozen=True)
class ReloadedTurn:
    """The turn's message in the reloaded session, or why there is none."""

    error: str | None = None
    citations: tuple[CitedRow, ...] = ()
    inline_citations: tuple[CitedRow, ...] = ()


@dataclass(frozen=True)
class Facts:
    """What the rules look at, read once from an observation."""

    observation: Observation
    streamed: tuple[CitedRow, ...]  # the `citation` events' rows, in order
    summary: tuple[CitedRow, ...] | None  # the last `citations_summary`'s rows; None: none came
    messages: tuple[tuple[int, object], ...]  # (event number, raw data) of `message` events
    text: str
    reloaded: ReloadedTurn | None  # None: the session was not reloaded
    no_old_checkpoint: bool = False  # the prompt's expectations rule out an old checkpoint

    def all_rows(self) -> Iterator[CitedRow]:
        """Every row the server sent: streamed, summarised, and reloaded."""
        yield from self.streamed
        yield from self.summary or ()
        if self.reloaded is not None:
            yield from self.reloaded.citations
            yield from self.reloaded.inline_citations


def _reloaded(observation: Observation) -> ReloadedTurn | None:
    reload = observation.reload
    if reload is None:
        return None
    if reload.error is not None:
        return ReloadedTurn(error=reload.error)
    wire = observation.wire
    body = reload.body
    messages = body.get(wire.messages_key) if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return ReloadedTurn(error="the session body has no messages")
    # The turn is the last assistant message (earlier ones are history).
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            return ReloadedTurn(
                citations=_rows(
                    f"session {wire.message_citations_key}",
                    message.get(wire.message_citations_key),
                ),
                inline_citations=_rows(
                    f"session {wire.message_inline_citations_key}",
                    message.get(wire.message_inline_citations_key),
                ),
            )
    return ReloadedTurn(error="the reloaded session has no assistant message for the turn")


def facts_of(observation: Observation, *, no_old_checkpoint: bool = False) -> Facts:
    """Lay `observation` out for the rules (`no_old_checkpoint`: from the prompt's `expect`)."""
    wire = observation.wire
    names = wire.events
    streamed: list[CitedRow] = []
    summary: tuple[CitedRow, ...] | None = None
    messages: list[tuple[int, object]] = []
    for number, sent in enumerate(observation.events, start=1):
        value = sent.value
        if sent.name == names.citation and isinstance(value, dict):
            row = _row(f"event {number} (citation)", value.get(wire.citation_key))
            if row is not None:
                streamed.append(row)
        elif sent.name == names.citations_summary and isinstance(value, dict):
            rows = value.get(wire.citations_key)
            if isinstance(rows, list):
                summary = _rows(names.citations_summary, rows)
        elif sent.name == names.message and value is not NOT_JSON:
            messages.append((number, value))
    return Facts(
        observation=observation,
        streamed=tuple(streamed),
        summary=summary,
        messages=tuple(messages),
        text=observation.turn.text,
        reloaded=_reloaded(observation),
        no_old_checkpoint=no_old_checkpoint,
    )


@dataclass(frozen=True)
class Problem:
    """What a check found: a message and the evidence (raw values; the checker redacts them).

    `severity` is this finding's, when it is not the rule's (None: the rule's).
    """

    message: str
    evidence: Mapping[str, object] = field(default_factory=dict)
    severity: Severity | None = None


@dataclass(frozen=True)
class Finding:
    """A rule broken by one turn: which rule, how bad, what happened, and the evidence.

    `severity` is its own (the rule's unless the check said otherwise); `request_id`
    and `session_id` name the turn as the server sent them. Built only by the
    checker, which redacts the message and the evidence.
    """

    rule: str
    severity: Severity
    message: str
    evidence: Mapping[str, object] = field(default_factory=dict)
    request_id: str | None = None
    session_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The finding as JSON, as the reports write it."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "evidence": dict(self.evidence),
            "request_id": self.request_id,
            "session_id": self.session_id,
        }


@dataclass(frozen=True)
class Rule:
    """One row of the rule table.

    `severity` is that of its findings unless a finding says otherwise. `skip`
    gives the reason the rule does not apply to a turn (no events arrived, the
    session was not reloaded, ...), or None when it does.
    """

    id: str
    severity: Severity
    description: str
    check: Callable[[Facts], Iterable[Problem]] = field(repr=False)
    skip: Callable[[Facts], str | None] = field(default=lambda facts: None, repr=False)


_EVIDENCE_CHARS = 240


def short(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def turn_ids(request_id: str | None, session_id: str | None) -> str:
    """`request req_1, session sess_2` (what the server sent of the two), or ''."""
    ids = [
        f"request {request_id}" if request_id else "",
        f"session {session_id}" if session_id else "",
    ]
    return ", ".join(part for part in ids if part)


def format_finding(finding: Finding, prompt: str | None = None) -> str:
    """`FAIL  rule-id  [prompt]  message  {evidence}  (request ..., session ...)` on one line."""
    level = "FAIL" if finding.severity == "error" else "warn"
    where = f"  [{prompt}]" if prompt else ""
    evidence = json.dumps(finding.evidence, ensure_ascii=False, separators=(",", ":"))
    ids = turn_ids(finding.request_id, finding.session_id)
    line = (
        f"{level}  {finding.rule}{where}  {short(finding.message, 10 * _EVIDENCE_CHARS)}  "
        f"{short(evidence, _EVIDENCE_CHARS)}" + (f"  ({ids})" if ids else "")
    )
    return terminal_text(line)
