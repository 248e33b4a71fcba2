"""Every [default] in one place: the wire's (`WireFormat`) and the client's (`DEFAULTS`).

The server team's `chat-citation-targets.md` fixes the citation targets ([doc]);
everything else the SDK reads or sends on the wire is our choice where it is silent,
kept in one frozen value, so a deployment that differs needs a one-line change::

    wire = dataclasses.replace(DEFAULT_WIRE, chat_path="/v2/claude")
    client = SilviaClient(base_url=..., wire=wire)

The reference server speaks the same `WireFormat`. `DEFAULTS` is what a client does
when not told otherwise, each named once with why; every other module reads it here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where it is used: `silvia --help` reads `DEFAULTS` without httpx
    import httpx


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


_KIB = 1024
_MIB = 1024 * _KIB


@dataclass(frozen=True)
class ClientDefaults:
    """The client's own defaults, read as `DEFAULTS.<name>` (`SilviaClient`'s docstring says
    what the arguments of the same names mean)."""

    # Where a client looks for what it is not given.
    base_url_env: str = "SILVIA_BASE_URL"
    token_env: str = "SILVIA_TOKEN"  # unset or empty: requests go without a token

    # One request's timeouts, per phase, in seconds.
    connect_timeout: float = 10.0  # a handshake slower than this is a host that is not there
    read_timeout: float = 60.0  # the wait for a head, and a GET's silences (a stream: idle)
    write_timeout: float = 30.0  # a request body is one message: it goes out in one piece
    pool_timeout: float = 10.0  # waiting for a free connection: as long as making one
    # The longest silence of a chat stream before it counts as stalled (a keep-alive
    # comment is a sign of life).
    idle_timeout: float = 90.0

    # The longest finite wait an argument may ask for (31 years), which every clock and
    # socket timeout here can hold. `math.inf`, where an argument documents it, is none.
    max_seconds: float = 1e9

    # A whole operation, retries and every read included (`deadline=None`).
    chat_deadline: float = 600.0  # long enough for a turn with many tool calls
    get_deadline: float = 120.0  # long enough for a GET that is retried twice

    # Far above any real turn: a guard against a server that never stops, not a quota.
    max_event_bytes: int = 16 * _MIB  # one SSE line, or one event's data
    max_response_bytes: int = 64 * _MIB  # a history body, or a whole stream, decompressed
    # Decoded, a body of tiny values grows up to 55 times its size (about 300 bytes a
    # value at most), so a call also reads at most `max_response_bytes // bytes_per_value`
    # JSON values and SSE events, counted before decoding (`_sse.most_values`): 2 Mi by
    # default, one call's peak under 800 MiB (`benchmarks/bench_limits.py --only-shapes`).
    # A real body holds a value in 11 to 15 bytes: the cap stops one at half its limit.
    bytes_per_value: int = 32
    min_values: int = 10_000  # the cap never below this: a small limit is about bytes

    # Retries (`_retries.py` has the rules).
    max_retries: int = 2  # enough to ride out a restart or a dropped connection, no more
    retry_backoff: float = 0.5  # seconds before the first retry, doubled each time, jittered
    max_backoff: float = 8.0  # the doubling stops here: later retries wait no longer
    max_retry_after: float = 60.0  # a server's Retry-After is honoured up to this
    # A longer `Retry-After` is read as this: `RateLimitError.retry_after` stays a number
    # a caller can sleep on.
    retry_after_ceiling: float = 3600.0
    retry_statuses: frozenset[int] = frozenset({408, 429})  # a GET's, plus every 5xx
    # A refusal before any work: the one status after which a chat POST is safe to send again.
    not_processed_statuses: frozenset[int] = frozenset({429})

    # [default] A message that is empty or only whitespace is refused before it is sent:
    # the server's document does not say, and the reference server answers 400.
    refuse_blank_message: bool = True
    # httpx refuses a longer URL; a session id that would make one is refused first.
    max_url_chars: int = 65_536

    # The SDK's own cookie jar: a sticky session sets a cookie or two; a server setting new
    # ones on every response must not grow the `Cookie` header without end. 8 KiB is about
    # the longest header line nginx and Apache accept by default.
    max_cookies: int = 50
    max_cookie_bytes: int = 8 * _KIB

    # Reading bodies (`_async/_body.py`, `ResponseErrors`).
    accept_encoding: str = "gzip, deflate"  # what `_body` decodes itself, in bounded pieces
    piece_bytes: int = 64 * _KIB  # the most one decoded piece holds: a gzip bomb comes in these
    error_body_max_bytes: int = 64 * _KIB  # an error body longer than this is cut, not read whole
    body_preview_chars: int = 200  # of a body shown in an error message
    # After `done`: the most read, and the longest waited, for the body's end, so that
    # the connection goes back to the pool; past either, it is closed.
    drain_bytes: int = 64 * _KIB
    drain_seconds: float = 0.1

    @property
    def timeout(self) -> httpx.Timeout:
        """The four request timeouts, as the `timeout` argument takes them."""
        import httpx

        return httpx.Timeout(
            connect=self.connect_timeout,
            read=self.read_timeout,
            write=self.write_timeout,
            pool=self.pool_timeout,
        )


DEFAULTS = ClientDefaults()
