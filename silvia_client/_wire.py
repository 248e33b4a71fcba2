"""Every [default] of the wire contract, in one place.

`chat-citation-targets.md` (the server team's document) fixes the citation
target shapes and where they sit. Everything else the SDK reads or sends on the
wire (paths, event names, field names, the error body, the request-id header)
is our choice where the document is silent. Those choices live here, in one
frozen value, so a deployment that differs needs a one-line change::

    wire = dataclasses.replace(DEFAULT_WIRE, chat_path="/v2/claude")
    client = SilviaClient(base_url=..., wire=wire)

The reference server in `silvia_client.testing` speaks the same `WireFormat`,
so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_WIRE", "EventNames", "WireFormat"]


@dataclass(frozen=True)
class EventNames:
    """The `event:` names of one chat turn's SSE stream."""

    session: str = "session"  # [default] {"sessionId": ...}, first
    text: str = "text"  # [default] {"text": "<delta>"}
    citation: str = "citation"  # [doc] {"citation": Citation}
    citations_summary: str = "citations_summary"  # [doc] {"citations": [Citation, ...]}
    message: str = "message"  # [doc] Anthropic's final message, raw, no targets
    error: str = "error"  # [default] {"error": {"type": ..., "message": ...}}
    done: str = "done"  # [default] {}, last


@dataclass(frozen=True)
class WireFormat:
    """Paths, field names and event names the SDK and the reference server share."""

    # Endpoints.
    chat_path: str = "/api/claude"  # [default] POST, answers text/event-stream
    session_path: str = "/api/chat/sessions/"  # [doc] GET + percent-encoded id
    request_id_header: str = "x-request-id"  # [default]

    # Chat request body.
    message_field: str = "message"  # [default]
    session_id_field: str = "sessionId"  # [default] omitted for a new session

    # Event data fields.
    events: EventNames = field(default_factory=EventNames)
    session_id_key: str = "sessionId"  # [default] in the `session` event
    text_key: str = "text"  # [default] in the `text` event
    citation_key: str = "citation"  # [doc] in the `citation` event
    citations_key: str = "citations"  # [doc] in the `citations_summary` event
    error_key: str = "error"  # [default] in the `error` event and error bodies

    # Session body.
    session_key: str = "session"  # [default]
    messages_key: str = "messages"  # [default]
    message_citations_key: str = "citations"  # [doc]
    message_inline_citations_key: str = "inline_citations"  # [doc]


DEFAULT_WIRE = WireFormat()
