"""Ways a turn goes wrong, applied to a turn's steps (or replacing the reply).

Where things are: the stream faults, placed by counting events (`after_events`),
named by `kind`, each `apply` giving the turn's steps with it in (a new list); the
status faults (`HttpError`; `status_fault`, what a fault answers before any event);
then the hostile ones, floods only a client's limits or deadline can end, and an
error echoing the bearer token. Each flood is a `Repeat` (one copy held), and its
answer is never stored. Their defaults exceed a client's default limits.

The gzip bomb's body comes last: `GzipBody` compresses each piece on its own (a raw
deflate stream ended by a sync flush), so one compressed segment can be sent again and
again (`padding`); the CRC-32 over all copies comes from one copy's (`_crc32_repeated`,
zlib's `crc32_combine` arithmetic), never by reading gigabytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, TypeAlias

from .. import WireFormat
from ._steps import (
    PING,
    Drop,
    Effect,
    Encoded,
    Event,
    Pause,
    Raw,
    Repeat,
    Step,
    after_events,
    json_bytes,
)


@dataclass(frozen=True)
class HttpError:
    """An error status before any event, with the contract's JSON error body."""

    kind: ClassVar[str] = "http_error"
    status: int
    error_type: str
    message: str
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def retry_after(self) -> float | None:
        return next((float(v) for name, v in self.headers if name.lower() == "retry-after"), None)


@dataclass(frozen=True)
class DropMidEvent:
    """The connection drops halfway through the event after the first `after_events`."""

    kind: ClassVar[str] = "drop"
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        event = next((step for step in steps[at:] if isinstance(step, Event)), None)
        if event is None:
            raise ValueError("no event left to cut")
        data = event.encode()
        return [*steps[: steps.index(event, at)], Raw(data[: len(data) // 2]), Drop()]


@dataclass(frozen=True)
class Stall:
    """Nothing for `seconds` after `after_events` events, then the rest of the turn."""

    kind: ClassVar[str] = "stall"
    seconds: float = 300.0
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        return [*steps[:at], Pause(self.seconds), *steps[at:]]


@dataclass(frozen=True)
class SendMalformed:
    """A known event name whose data is not what it should be (raw bytes, as given)."""

    kind: ClassVar[str] = "malformed_event"
    event: str = "citation"
    data: str = '{"citation": {"source": "silvia://your-account/checking", '
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        raw = Raw(f"event: {self.event}\ndata: {self.data}\n\n".encode())
        return [*steps[:at], raw, *steps[at:]]


@dataclass(frozen=True)
class SendUnknown:
    """An event name the contract does not define; the turn still completes."""

    kind: ClassVar[str] = "unknown_event"
    event: str = "tool_progress"
    data: object = None
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        data = {"tool": "execute_sql", "status": "running"} if self.data is None else self.data
        return [*steps[:at], Event(self.event, data), *steps[at:]]


@dataclass(frozen=True)
class SendError:
    """An in-band `error` event after `after_events` events; the stream ends there."""

    kind: ClassVar[str] = "error_event"
    error_type: str = "overloaded_error"
    message: str = "The model is overloaded. Try again in a moment."
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        at = after_events(steps, self.after_events)
        error = {wire.error_key: {"type": self.error_type, "message": self.message}}
        return [*steps[:at], Event(wire.events.error, error)]


@dataclass(frozen=True)
class EndWithoutDone:
    """The whole turn but no `done`: the body ends cleanly where `done` would be.

    The turn never completes, so the assistant's message is not stored either.
    """

    kind: ClassVar[str] = "no_done"

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        done = [
            index
            for index, step in enumerate(steps)
            if isinstance(step, Event) and step.name == wire.events.done
        ]
        if not done:
            return list(steps)
        kept = steps[: done[-1]]
        if kept and isinstance(kept[-1], Effect):
            kept.pop()  # the storing of the completed turn, which never completes
        return kept


# -- hostile servers ---------------------------------------------------------------

MiB = 1024 * 1024
TOKEN_PLACEHOLDER = "{token}"
"""In an `EchoToken` message: where the request's bearer token goes."""

# What an endless line or an oversized event's data is made of, a copy at a time.
_PIECE = b"x" * (64 * 1024)
# A gzip bomb's padding: in a stream, comment lines (nothing to a reader but their
# size); in a JSON body, whitespace between two tokens.
_COMMENT_LINE = b":" + b" " * 1022 + b"\n"
_JSON_SPACE = b" "


def _before(steps: list[Step], events: int, wire: WireFormat) -> list[Step]:
    """The steps up to the `events`-th event, less the storing of the answer (the
    `Effect` just before `done`): a hostile fault never lets the turn complete."""
    cut = after_events(steps, events)
    stores = [
        index - 1
        for index, step in enumerate(steps)
        if isinstance(step, Event) and step.name == wire.events.done and index > 0
    ]
    skip = {i for i in stores if isinstance(steps[i], Effect)}
    return [step for index, step in enumerate(steps[:cut]) if index not in skip]


def _counted(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of bytes above 0")


def _paced(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be a number of seconds above 0")


@dataclass(frozen=True)
class SendEndlessLine:
    """After `after_events` events, a `data:` line that never ends: no newline, ever.

    The server writes it 64 KiB at a time until the client gives up and closes
    the connection; a client's `max_event_bytes` is what ends it.
    """

    kind: ClassVar[str] = "endless_line"
    after_events: int = 6

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        return [*_before(steps, self.after_events, wire), Raw(b"data: "), Repeat(_PIECE)]


@dataclass(frozen=True)
class SendOversizedEvent:
    """After `after_events` events, one `text` event whose data is `data_bytes` long.

    The event is well formed (`{"text": "xxx..."}`), written 64 KiB at a time;
    then the body ends, without `done`. The default, 64 MiB, is four times a
    client's default `max_event_bytes`.
    """

    kind: ClassVar[str] = "oversized_event"
    data_bytes: int = 64 * MiB
    after_events: int = 6

    def __post_init__(self) -> None:
        _counted("data_bytes", self.data_bytes)

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        opening = b'{"' + wire.text_key.encode() + b'":"'
        # The text is what is left of `data_bytes` after the JSON around it.
        times, rest = divmod(max(self.data_bytes - len(opening) - 2, 0), len(_PIECE))
        head = b"event: " + wire.events.text.encode() + b"\ndata: " + opening
        return [
            *_before(steps, self.after_events, wire),
            Raw(head),
            Repeat(_PIECE, times=times),
            Raw(_PIECE[:rest] + b'"}\n\n'),
        ]


@dataclass(frozen=True)
class SendGzipBomb:
    """The body gzip-encoded; after `after_events` events, padding that inflates to
    `inflated_bytes` (1 GiB by default: about 2 MiB on the wire), then the end.

    The padding is SSE comment lines, which a reader skips, so only a limit on
    the decoded stream (`max_response_bytes`) stops it. Picked with the
    scenario header, the session endpoint answers a bomb too: a JSON body whose
    whitespace inflates to `inflated_bytes`. The server holds one compressed
    copy of the padding, however often it sends it.
    """

    kind: ClassVar[str] = "gzip_bomb"
    inflated_bytes: int = 1024 * MiB
    after_events: int = 6

    headers: ClassVar[tuple[tuple[str, str], ...]] = (("content-encoding", "gzip"),)

    def __post_init__(self) -> None:
        _counted("inflated_bytes", self.inflated_bytes)

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        body = GzipBody()
        encoded: list[Step] = [
            Encoded(step, body.piece(step.encode())) if isinstance(step, (Event, Raw)) else step
            for step in _before(steps, self.after_events, wire)
        ]
        return [*encoded, *body.padding(_COMMENT_LINE, self.inflated_bytes), Raw(body.end())]

    def session_body(self, session_id: str, wire: WireFormat) -> list[Step]:
        """A session body, gzip-encoded, with `inflated_bytes` of whitespace in it."""
        body = GzipBody()
        session = json_bytes({wire.session_key: {"id": session_id}})
        opening = session[:-1] + b',"' + wire.messages_key.encode() + b'":['
        return [
            Raw(body.piece(opening)),
            *body.padding(_JSON_SPACE, self.inflated_bytes),
            Raw(body.piece(b"]}") + body.end()),
        ]


@dataclass(frozen=True)
class Trickle:
    """After `after_events` events, one byte of a line every `every` seconds, forever.

    Bytes keep coming, so a client's idle timeout never fires; only its
    deadline ends the turn. The line never ends, and grows by a byte a beat.
    """

    kind: ClassVar[str] = "trickle"
    every: float = 2.0
    after_events: int = 6

    def __post_init__(self) -> None:
        _paced("every", self.every)

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        trickle = Repeat(b"x", every=self.every)
        return [*_before(steps, self.after_events, wire), Raw(b"data: "), trickle]


@dataclass(frozen=True)
class KeepAliveForever:
    """After `after_events` events, a keep-alive comment every `every` seconds, forever.

    The connection is alive and the server says so, but the turn never goes
    on: a client's idle timeout never fires, and only its deadline ends it.
    """

    kind: ClassVar[str] = "keep_alive_forever"
    every: float = 1.0
    after_events: int = 6

    def __post_init__(self) -> None:
        _paced("every", self.every)

    def apply(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        """The turn's steps with this fault in them (a new list)."""
        return [*_before(steps, self.after_events, wire), Repeat(PING.data, every=self.every)]


@dataclass(frozen=True)
class EchoToken:
    """An error whose message holds the request's own bearer token, as a careless server's does.

    `{token}` in `message` becomes the token the request carried. With `status`
    None it is an in-band `error` event after `after_events` events (the stream
    ends there); with a status it is that status and a JSON error body, before
    any event (picked with the scenario header, on the session endpoint too).
    """

    kind: ClassVar[str] = "echo_token"
    status: int | None = None
    error_type: str = "api_error"
    message: str = "Request failed for Authorization: Bearer {token}"
    after_events: int = 6

    def __post_init__(self) -> None:
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError("status must be None (an `error` event) or from 400 to 599")

    def message_for(self, token: str) -> str:
        """The message as the server sends it to a request carrying `token`."""
        return self.message.replace(TOKEN_PLACEHOLDER, token)

    def apply(self, steps: list[Step], wire: WireFormat, token: str = "") -> list[Step]:
        """The turn's steps with this fault in them, `token` echoed (a new list)."""
        error = {wire.error_key: {"type": self.error_type, "message": self.message_for(token)}}
        return [*_before(steps, self.after_events, wire), Event(wire.events.error, error)]


StreamFault: TypeAlias = (
    DropMidEvent
    | Stall
    | SendMalformed
    | SendUnknown
    | SendError
    | EndWithoutDone
    | SendEndlessLine
    | SendOversizedEvent
    | SendGzipBomb
    | Trickle
    | KeepAliveForever
    | EchoToken
)
Fault: TypeAlias = HttpError | StreamFault


def status_fault(fault: Fault | None, token: str = "") -> HttpError | None:
    """The status `fault` answers with before any event, for a request carrying `token`."""
    if isinstance(fault, EchoToken) and fault.status is not None:
        return HttpError(fault.status, fault.error_type, fault.message_for(token))
    return fault if isinstance(fault, HttpError) else None


_POLY = 0xEDB88320  # CRC-32's polynomial, reflected
# The padding compressed once: deflate gives about 1 KiB out per MiB in at best.
_UNIT = 1024 * 1024
_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # no name, no time, best compression


def _multmodp(a: int, b: int) -> int:
    """a(x) times b(x), modulo the CRC-32 polynomial."""
    m = 1 << 31
    product = 0
    while True:
        if a & m:
            product ^= b
            if not a & (m - 1):
                return product
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


_X2N = [1 << 30]  # x^(2^k) modulo the polynomial, for k = 0..31: x^1 first, then squares
for _ in range(31):
    _X2N.append(_multmodp(_X2N[-1], _X2N[-1]))


def _x2nmodp(n: int, k: int) -> int:
    """x^(n * 2^k), modulo the polynomial."""
    product = 1 << 31  # x^0
    while n:
        if n & 1:
            product = _multmodp(_X2N[k & 31], product)
        n >>= 1
        k += 1
    return product


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of A then B, from A's CRC, B's CRC and B's length."""
    if length2 <= 0:
        return crc1
    return _multmodp(_x2nmodp(length2, 3), crc1) ^ crc2


def _crc32_repeated(crc: int, length: int, times: int) -> int:
    """The CRC-32 of `times` copies of data whose CRC is `crc` and length `length`."""
    total = 0
    while times:
        if times & 1:
            total = crc32_combine(total, crc, length)
        crc = crc32_combine(crc, crc, length)
        length *= 2
        times >>= 1
    return total


def _compressed(data: bytes) -> bytes:
    """`data` as a raw deflate piece that refers to nothing before it and ends byte-aligned."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)


@lru_cache(maxsize=8)
def _run(line: bytes) -> tuple[bytes, int, int]:
    """A run of `line` about `_UNIT` long (one long run compresses best): its compressed
    form, its CRC-32 and its length. Kept, so a bomb per request costs no compression."""
    data = line * max(1, _UNIT // len(line))
    return _compressed(data), zlib.crc32(data), len(data)


class GzipBody:
    """One gzip member, written piece by piece; `end()` finishes it. One per response."""

    def __init__(self) -> None:
        self._crc = 0
        self._size = 0
        self._started = False

    def _opening(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return _HEADER

    def piece(self, data: bytes) -> bytes:
        """The bytes that carry `data` (the member's header first, the first time)."""
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        return self._opening() + (_compressed(data) if data else b"")

    def padding(self, line: bytes, total: int) -> list[Step]:
        """The steps that send `total` bytes of `line` again and again (the last copy cut short).

        The member's header (if not sent yet), one compressed run repeated, then
        the rest: whatever `total` is, no step is bigger than `_UNIT` bytes compressed.
        """
        if not line:
            raise ValueError("padding needs at least one byte to repeat")
        segment, crc, length = _run(line)
        times, tail_length = divmod(total, length)
        if times:
            repeated = _crc32_repeated(crc, length, times)
            self._crc = crc32_combine(self._crc, repeated, length * times)
        tail = (line * (tail_length // len(line) + 1))[:tail_length]
        self._crc = zlib.crc32(tail, self._crc)
        self._size += total
        opening = self._opening()
        steps: list[Step] = [Raw(opening)] if opening else []
        if times:
            steps.append(Repeat(segment, times=times))
        return [*steps, Raw(_compressed(tail))] if tail else steps

    def end(self) -> bytes:
        """The last bytes: an empty final block, the CRC-32 and the length (modulo 2^32)."""
        final = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush(zlib.Z_FINISH)
        return self._opening() + final + struct.pack("<II", self._crc, self._size & 0xFFFFFFFF)
