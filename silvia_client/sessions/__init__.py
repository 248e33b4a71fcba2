"""Session history: the same typed citations as a live turn.

- `_history.py`  `Session` and `Message`, and reading a session body (`parse_session`)
- `_resource.py` `client.sessions.get(...)` and `get_raw(...)`, sync and async
"""

from ._history import Message, Session, parse_session, read_session, session_path
from ._resource import AsyncSessions, Sessions

__all__ = [
    "AsyncSessions",
    "Message",
    "Session",
    "Sessions",
    "parse_session",
    "read_session",
    "session_path",
]
