"""What the views read of what they render: the rows, a turn, a message, a session.

`CitedRow` and `StreamedRow` (a row, and a streamed one), `TurnLike`, `MessageLike`
and `SessionLike`: the views take anything with these attributes, so `display`
imports no model. `TurnData`, `MessageData` and `SessionData` are what the records
(`../_records.py`) and the JSON documents (`../_export.py`) read, for the same
reason. The models (`Citation` and `InlineCitation` in `citations/_rows.py`,
`Turn` in `chat/_turn.py`, `Session` and `Message` in `sessions/_history.py`)
import these modules in their methods, and an import back, even under
`TYPE_CHECKING`, would close a cycle (import-linter counts both). Each model
satisfies its protocol as it is; every attribute is read-only here, as the
models are frozen. From the citations package, `display` imports only its
ground floor (`_targets.py`, `_links.py`, `_final.py`), which imports no model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..citations._targets import TargetedRow

__all__ = [
    "CitedRow",
    "MessageData",
    "MessageLike",
    "SessionData",
    "SessionLike",
    "StreamedRow",
    "TurnData",
    "TurnErrorLike",
    "TurnLike",
    "WireRow",
    "WireStreamedRow",
]


class CitedRow(TargetedRow, Protocol):
    """A citation row (`Citation`): what the ground floor reads (source, title, target),
    and the quoted text."""

    @property
    def cited_text(self) -> str | None: ...


class StreamedRow(CitedRow, Protocol):
    """A row as it streamed in (`InlineCitation`): also the answer's length when it came."""

    @property
    def offset(self) -> int | None: ...


class TurnErrorLike(Protocol):
    """What a turn's failure says (`ErrorEvent`)."""

    @property
    def message(self) -> str: ...


class TurnLike(Protocol):
    """A turn (`Turn`): its answer, its rows (the summary's and the streamed), how it ended."""

    @property
    def text(self) -> str: ...
    @property
    def citations(self) -> Sequence[CitedRow]: ...
    @property
    def inline_citations(self) -> Sequence[StreamedRow]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def error(self) -> TurnErrorLike | None: ...


class MessageLike(Protocol):
    """One message of a session (`Message`): its role, its text, its rows."""

    @property
    def role(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def citations(self) -> Sequence[CitedRow]: ...
    @property
    def inline_citations(self) -> Sequence[StreamedRow]: ...


class SessionLike(Protocol):
    """A session (`Session`): its id, its title, its messages."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def messages(self) -> Sequence[MessageLike]: ...


class WireRow(CitedRow, Protocol):
    """A row that gives back its wire form (`Citation`): its provider only when asked."""

    def model_dump(
        self, *, mode: str = ..., context: dict[str, Any] | None = ...
    ) -> dict[str, Any]: ...


class WireStreamedRow(StreamedRow, WireRow, Protocol):
    """A streamed row that gives back its wire form (`InlineCitation`)."""


class TimingsLike(Protocol):
    @property
    def first_byte(self) -> float | None: ...
    @property
    def first_text(self) -> float | None: ...
    @property
    def done(self) -> float | None: ...


class TurnData(TurnLike, Protocol):
    """What a turn's records and document read (`Turn`): also its ids, timings, wire rows."""

    @property
    def session_id(self) -> str | None: ...
    @property
    def request_id(self) -> str | None: ...
    @property
    def timings(self) -> TimingsLike: ...
    @property
    def citations(self) -> Sequence[WireRow]: ...
    @property
    def inline_citations(self) -> Sequence[WireStreamedRow]: ...


class MessageData(MessageLike, Protocol):
    """What a message's records and document read (`Message`): also its id, time, wire rows."""

    @property
    def id(self) -> str | None: ...
    @property
    def created_at(self) -> str | None: ...
    @property
    def citations(self) -> Sequence[WireRow]: ...
    @property
    def inline_citations(self) -> Sequence[WireStreamedRow]: ...


class SessionData(SessionLike, Protocol):
    """What a session's records and document read (`Session`): also its request id."""

    @property
    def request_id(self) -> str | None: ...
    @property
    def messages(self) -> Sequence[MessageData]: ...
