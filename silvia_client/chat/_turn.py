"""Accumulating a turn's events into a `Turn`, and the per-source registry.

Accumulation is O(1) per event: text pieces are appended and joined once,
citations are appended, and the registry updates one entry. The one O(n) step,
making every citation agree with the registry, runs once, when the `Turn` is
built (at the end, or when a failure hands back the partial turn).

One meaning per source per turn (the doc): a citation echoes only its source,
so a source means one thing for the whole turn. When a later call writes the
same account source again its accounts are pooled into the target; any other
disagreement leaves the source untyped for the rest of the turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..citations import AccountRef, AccountsTarget, AccountTarget, CitationTarget, RowError
from .events import (
    ChatEvent,
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
)

if TYPE_CHECKING:
    from ..citations import Citation, InlineCitation

__all__ = ["SourceRegistry", "Turn", "TurnBuilder"]

_PREVIEW_CHARS = 60


def _account_refs(target: CitationTarget | None) -> tuple[AccountRef, ...] | None:
    if isinstance(target, AccountTarget):
        return (target.ref,)
    if isinstance(target, AccountsTarget):
        return target.accounts
    return None


def _pool(old: tuple[AccountRef, ...], new: tuple[AccountRef, ...]) -> CitationTarget:
    # Each account once (by id), in the order the turn first named it.
    by_id: dict[str, AccountRef] = {}
    for ref in old + new:
        by_id.setdefault(ref.account_id, ref)
    refs = tuple(by_id.values())
    if len(refs) == 1:
        return AccountTarget(refs[0].account_id, refs[0].provider)
    return AccountsTarget(refs)


class SourceRegistry:
    """What each source of a turn points at, so far."""

    __slots__ = ("_targets",)

    def __init__(self) -> None:
        # A source maps to its target; None once untyped (or never typed), for good.
        self._targets: dict[str, CitationTarget | None] = {}

    def observe(self, source: str, target: CitationTarget | None) -> None:
        targets = self._targets
        if source not in targets:
            targets[source] = target
            return
        known = targets[source]
        if known is None or known == target:
            return
        known_refs, new_refs = _account_refs(known), _account_refs(target)
        if known_refs is not None and new_refs is not None:
            targets[source] = _pool(known_refs, new_refs)
        else:
            targets[source] = None

    def target_for(self, source: str) -> CitationTarget | None:
        return self._targets.get(source)

    def snapshot(self) -> dict[str, CitationTarget | None]:
        return dict(self._targets)


CitationT = TypeVar("CitationT", bound="Citation")


def _agree(
    citations: list[CitationT], targets: Mapping[str, CitationTarget | None]
) -> tuple[CitationT, ...]:
    from ..citations._rows import citation_with_target

    out = []
    for citation in citations:
        final = targets.get(citation.source)
        if citation.target != final:
            citation = citation_with_target(citation, final)
        out.append(citation)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Turn:
    """One chat turn as the client assembled it.

    `citations` are the summary's (final); `inline_citations` are the streamed
    ones in order, each with its `offset` in `text`. Both agree with
    `target_for`, the registry at the end of the turn. `complete` is True only
    when `done` arrived.
    """

    text: str = ""
    citations: tuple[Citation, ...] = ()
    inline_citations: tuple[InlineCitation, ...] = ()
    session_id: str | None = None
    message: dict[str, Any] | None = field(default=None, repr=False)
    complete: bool = False
    error: ErrorEvent | None = None
    unknown_events: tuple[UnknownEvent, ...] = ()
    malformed_events: tuple[MalformedEvent, ...] = ()
    citation_errors: tuple[RowError, ...] = ()
    _targets: Mapping[str, CitationTarget | None] = field(default_factory=dict, repr=False)

    def target_for(self, source: str) -> CitationTarget | None:
        """The target `source` has at the end of the turn (None: untyped or never cited)."""
        return self._targets.get(source)

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source the turn cited, in order of first appearance."""
        return tuple(self._targets)

    def _repr_html_(self) -> str:
        from ..display import turn_html  # imported here: only notebooks need it

        return turn_html(self)

    def _repr_markdown_(self) -> str:
        from ..display import turn_markdown

        return turn_markdown(self)

    def __repr__(self) -> str:
        preview = self.text[:_PREVIEW_CHARS] + ("…" if len(self.text) > _PREVIEW_CHARS else "")
        return (
            f"Turn(session_id={self.session_id!r}, complete={self.complete}, "
            f"text={preview!r}, citations={len(self.citations)}, "
            f"inline_citations={len(self.inline_citations)})"
        )


class TurnBuilder:
    """Applies events, one at a time, to a turn under construction."""

    __slots__ = (
        "_citation_errors",
        "_inline",
        "_malformed",
        "_message",
        "_registry",
        "_summary",
        "_text",
        "done",
        "error",
        "session_id",
        "text_length",
        "unknown",
    )

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.text_length = 0
        self.done = False
        self.error: ErrorEvent | None = None
        self.unknown: list[UnknownEvent] = []
        self._text: list[str] = []
        self._inline: list[InlineCitation] = []
        self._summary: list[Citation] = []
        self._citation_errors: list[RowError] = []
        self._malformed: list[MalformedEvent] = []
        self._message: dict[str, Any] | None = None
        self._registry = SourceRegistry()

    def apply(self, event: ChatEvent) -> None:
        # Ordered by how often each event arrives.
        if isinstance(event, TextEvent):
            text = event.text
            self._text.append(text)
            self.text_length += len(text)
        elif isinstance(event, CitationEvent):
            citation = event.citation
            self._inline.append(citation)
            self._registry.observe(citation.source, citation.target)
        elif isinstance(event, CitationsSummaryEvent):
            self._summary = list(event.citations)
            self._citation_errors.extend(event.errors)
            for final in event.citations:
                self._registry.observe(final.source, final.target)
        elif isinstance(event, SessionEvent):
            self.session_id = event.session_id
        elif isinstance(event, MessageEvent):
            self._message = event.message
        elif isinstance(event, DoneEvent):
            self.done = True
        elif isinstance(event, ErrorEvent):
            self.error = event
        elif isinstance(event, UnknownEvent):
            self.unknown.append(event)
        else:
            self._malformed.append(event)

    def build(self) -> Turn:
        targets = self._registry.snapshot()
        return Turn(
            text="".join(self._text),
            citations=_agree(self._summary, targets),
            inline_citations=_agree(self._inline, targets),
            session_id=self.session_id,
            message=self._message,
            complete=self.done and self.error is None,
            error=self.error,
            unknown_events=tuple(self.unknown),
            malformed_events=tuple(self._malformed),
            citation_errors=tuple(self._citation_errors),
            _targets=targets,
        )
