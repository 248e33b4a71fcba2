"""What the views read of what they render: the rows, a turn, a message, a session.

`CitedRow` and `StreamedRow` (a row, and a streamed one), `TurnLike`, `MessageLike`
and `SessionLike`: the views take anything with these attributes, so `display`
imports no model. The models (`Citation` and `InlineCitation` in
`citations/_rows.py`, `Turn` in `chat/_turn.py`, `Session` and `Message` in
`sessions/_history.py`) import `display` in their notebook hooks (`_repr_html_`,
`_repr_markdown_`), and an import back from here, even under `TYPE_CHECKING`,
would close a cycle (import-linter counts both). Each model satisfies its
protocol as it is; every attribute is read-only here, as the models are frozen.

From the citations package, `display` imports only its ground floor, which
imports no model at run time: the targets (`_targets.py`), the links and labels
(`_links.py`) and the final-target rule (`_final.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..citations._targets import TargetedRow

__all__ = ["CitedRow", "MessageLike", "SessionLike", "StreamedRow", "TurnErrorLike", "TurnLike"]


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
