"""What a rule is and what it finds: `Rule`, `Problem`, `Finding`, `Severity`; a finding's line.

A rule's check (`_checks.py`, named in `rules.py`'s table) reads a `Facts` and yields
`Problem`s: a message and the raw evidence; `checker.py` makes each a redacted `Finding`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .._text import terminal_text
from ._facts import Facts

Severity: TypeAlias = Literal["error", "warning"]


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
