"""The server's stored sessions: what `GET {session_path}<id>` serves.

Where things are: `SessionStore` keeps each turn's messages with their
citations as streamed, and hands out deep copies, so a test can look without
racing the server thread.
"""

from __future__ import annotations

import copy
import itertools
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .. import WireFormat

__all__ = ["SessionStore", "StoredSession", "new_session_id", "utc_now"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_session_id() -> str:
    return f"sess_{uuid.uuid4().hex}"


FIXED_TIME = "2025-01-01T00:00:00.000Z"
"""Every timestamp of a deterministic store."""


@dataclass
class StoredSession:
    """One session as stored: `messages` are wire rows (`id`, `role`, `content`, ...)."""

    id: str
    title: str
    created_at: str
    updated_at: str
    messages: list[dict[str, object]] = field(default_factory=list)

    def body(self, wire: WireFormat) -> dict[str, object]:
        """The session endpoint's JSON body."""
        session = {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        return {wire.session_key: session, wire.messages_key: self.messages}


class SessionStore(Mapping[str, StoredSession]):
    """Thread-safe session storage; `store[session_id]` is a snapshot copy.

    `deterministic`: ids count up (`sess_0001`, `msg_0001`, ...) and every
    timestamp is `FIXED_TIME`, so saved outputs and snapshots repeat exactly.
    """

    def __init__(self, wire: WireFormat, *, deterministic: bool = False) -> None:
        self._wire = wire
        self._lock = threading.Lock()
        self._sessions: dict[str, StoredSession] = {}
        self._counters = (itertools.count(1), itertools.count(1)) if deterministic else None

    def new_session_id(self) -> str:
        """A fresh session id (random, or the next of `sess_0001`, ... when deterministic)."""
        if self._counters is None:
            return new_session_id()
        with self._lock:
            return f"sess_{next(self._counters[0]):04d}"

    def _now(self) -> str:
        return utc_now() if self._counters is None else FIXED_TIME

    def _message_id(self) -> str:  # under the lock
        if self._counters is None:
            return f"msg_{uuid.uuid4().hex[:24]}"
        return f"msg_{next(self._counters[1]):04d}"

    def __getitem__(self, session_id: str) -> StoredSession:
        with self._lock:
            return copy.deepcopy(self._sessions[session_id])

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._sessions))

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        # Without `Mapping`'s default, which would deep-copy the session to look.
        with self._lock:
            return session_id in self._sessions

    def open(self, session_id: str, first_message: str) -> bool:
        """Make sure the session exists (titled by its first message); True if it was new."""
        with self._lock:
            if session_id in self._sessions:
                return False
            now = self._now()
            title = " ".join(first_message.split())[:60] or "New chat"
            self._sessions[session_id] = StoredSession(session_id, title, now, now)
            return True

    def is_empty(self, session_id: str) -> bool:
        """Whether the session is unknown or holds no message yet."""
        with self._lock:
            session = self._sessions.get(session_id)
            return session is None or not session.messages

    def append(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        citations: Sequence[Mapping[str, object]] = (),
        inline_citations: Sequence[Mapping[str, object]] = (),
    ) -> None:
        """Store one message row at the end of the session."""
        now = self._now()
        row: dict[str, object] = {
            "id": "",
            "role": role,
            "content": content,
            "created_at": now,
            self._wire.message_citations_key: copy.deepcopy(list(citations)),
            self._wire.message_inline_citations_key: copy.deepcopy(list(inline_citations)),
        }
        with self._lock:
            row["id"] = self._message_id()
            session = self._sessions[session_id]
            session.messages.append(row)
            session.updated_at = now

    def body(self, session_id: str) -> dict[str, object] | None:
        """The session endpoint's JSON body, or None if there is no such session."""
        with self._lock:
            session = self._sessions.get(session_id)
            return None if session is None else copy.deepcopy(session.body(self._wire))
