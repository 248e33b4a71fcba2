"""Chat turns: the stream, its typed events, and the assembled `Turn`.

- `events.py`   every event type, and the table that reads them off the wire
- `_turn.py`    `Turn` (rows as sent, `target_for`, `Timings`) and its O(1)-per-event builder
- `_stream.py`  `ChatStream` / `AsyncChatStream`: the reading loops, sync and async,
  what they share (the turn being built, the errors), and `RawEvent`
- `_resource.py` `client.chat.stream(...)` and `client.chat.send(...)`
"""

from ._resource import AsyncChat, Chat
from ._stream import AsyncChatStream, ChatStream, RawEvent
from ._turn import Timings, Turn, TurnBuilder
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
