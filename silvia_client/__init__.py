"""silvia-client: a typed client for Silvia's chat API, built around citation targets.

from silvia_client import SilviaClient

with SilviaClient() as client:  # SILVIA_BASE_URL, SILVIA_TOKEN
    with client.chat.stream("How much is in checking?") as stream:
        for text in stream.text_stream:
            print(text, end="")
        turn = stream.until_done()
"""

from typing import TYPE_CHECKING

from . import errors
from ._lazy import load_on_first_use
from .errors import *  # noqa: F403  (the error tree imports nothing: it loads with the package)

if TYPE_CHECKING:
    from ._async._client import AsyncSilviaClient
    from ._sync._client import SilviaClient
    from ._version import __version__
    from ._wire import DEFAULT_WIRE, EventNames, WireFormat
    from .chat import AsyncChatStream, ChatEvent, ChatStream, Turn
    from .citations import (
        AccountRef,
        Citation,
        CitationTarget,
        InlineCitation,
        parse_citation_target,
        resolve_citation,
    )
    from .sessions import Message, Session

__all__ = [
    "DEFAULT_WIRE",
    "AccountRef",
    "AsyncChatStream",
    "AsyncSilviaClient",
    "ChatEvent",
    "ChatStream",
    "Citation",
    "CitationTarget",
    "EventNames",
    "InlineCitation",
    "Message",
    "Session",
    "SilviaClient",
    "Turn",
    "WireFormat",
    "__version__",
    "parse_citation_target",
    "resolve_citation",
]
__all__ += errors.__all__  # every error, named once: in `errors.py`

# Where each other public name lives; each is imported on first use (`_lazy.py` says why).
_WHERE = {
    "._async._client": "AsyncSilviaClient",
    "._sync._client": "SilviaClient",
    "._version": "__version__",
    "._wire": "DEFAULT_WIRE EventNames WireFormat",
    ".chat": "AsyncChatStream ChatEvent ChatStream Turn",
    ".citations": (
        "AccountRef Citation CitationTarget InlineCitation parse_citation_target resolve_citation"
    ),
    ".sessions": "Message Session",
}
load_on_first_use(__name__, {module: tuple(names.split()) for module, names in _WHERE.items()})
