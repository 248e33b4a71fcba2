"""Session history with the same typed citations as a live turn: `_history.py` reads a body,
`_async/_sessions.py` (and `_sync/`) is `client.sessions`, its I/O."""

from typing import TYPE_CHECKING

from .._lazy import load_on_first_use

if TYPE_CHECKING:
    from .._async._sessions import AsyncSessions
    from .._sync._sessions import Sessions
    from ._history import Message, Session, parse_session, read_session, session_path

__all__ = [
    "AsyncSessions",
    "Message",
    "Session",
    "Sessions",
    "parse_session",
    "read_session",
    "session_path",
]

# Each name is imported on first use (`_lazy.py`): the resources import this package's
# modules, and this package names them.
_WHERE = {
    ".._async._sessions": "AsyncSessions",
    ".._sync._sessions": "Sessions",
    "._history": "Message Session parse_session read_session session_path",
}
load_on_first_use(__name__, {module: tuple(names.split()) for module, names in _WHERE.items()})
