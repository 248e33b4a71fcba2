"""Chat turns: the stream, its typed events, and the assembled `Turn`.

- `events.py`   every event type, `RawEvent`, and the table that reads them off the wire
- `_turn.py`    `Turn`, its O(1)-per-event builder, and `TurnSoFar` (`stream.current_turn`)
- `ChatStream` (the reading loop) and `Chat` (`client.chat`): the I/O, in `silvia_client/_async/`
  and, generated from it, `_sync/`
"""

from typing import TYPE_CHECKING

from .._lazy import load_on_first_use

if TYPE_CHECKING:
    from .._async._stream import AsyncChat, AsyncChatStream
    from .._sync._stream import Chat, ChatStream
    from ._turn import Timings, Turn, TurnBuilder
    from .events import (
        ChatEvent,
        CitationEvent,
        CitationsSummaryEvent,
        DoneEvent,
        ErrorEvent,
        MalformedEvent,
        MessageEvent,
        RawEvent,
        SessionEvent,
        TextEvent,
        UnknownEvent,
        decode_event,
    )

__all__ = [
    "AsyncChat",
    "AsyncChatStream",
    "Chat",
    "ChatEvent",
    "ChatStream",
    "CitationEvent",
    "CitationsSummaryEvent",
    "DoneEvent",
    "ErrorEvent",
    "MalformedEvent",
    "MessageEvent",
    "RawEvent",
    "SessionEvent",
    "TextEvent",
    "Timings",
    "Turn",
    "TurnBuilder",
    "UnknownEvent",
    "decode_event",
]

# Each name is imported on first use (`_lazy.py`): the streams and resources import this
# package's modules, and this package names them.
_WHERE = {
    ".._async._stream": "AsyncChat AsyncChatStream",
    ".._sync._stream": "Chat ChatStream",
    "._turn": "Timings Turn TurnBuilder",
    ".events": (
        "ChatEvent CitationEvent CitationsSummaryEvent DoneEvent ErrorEvent MalformedEvent "
        "MessageEvent RawEvent SessionEvent TextEvent UnknownEvent decode_event"
    ),
}
load_on_first_use(__name__, {module: tuple(names.split()) for module, names in _WHERE.items()})
