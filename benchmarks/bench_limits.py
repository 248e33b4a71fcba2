"""Peak memory against a hostile server, with the size limits and without them, in one run.

    python benchmarks/bench_limits.py [--payload-mib N] [--events N] [--tiny-mib N]
                                      [--shape-mib N] [--shape PREFIX] [--only-tiny | --only-shapes]

A raw-socket server on 127.0.0.1 (in this process) sends, for each case,
`--payload-mib` MiB (default 64) of:

* endless-line: a chat stream whose one `data:` line never ends;
* huge-event: a chat stream with one event of that size;
* gzip-chat / gzip-history: a gzip bomb (about 1/1000 of that on the wire)
  as a chat stream, and as a history body;
* huge-history: a history body of that size.

Each case runs in a fresh child process (so its peak is its own), once per
limit: `max_event_bytes` and `max_response_bytes` both at 4 MiB, both at 16
MiB, and both unbounded ("none"), which is what the SDK did before it had
limits (it also let httpx inflate a whole network read at once, which the
unbounded run here does not, so "none" understates the old peak). Each prints
the growth of its peak RSS over its RSS just before the request (Linux: the
peak, VmHWM, is reset through /proc/self/clear_refs), and the error the SDK
raised. Goal: with a limit, peak growth under 4
times the limit.

Then the shapes that grow most in memory for their size, each in a fresh child
process with the client's default limits (`--tiny-mib` MiB, default 32, sent of
each, gzip on the wire): a history of tiny citation rows (`{"source":"a"},`), a
chat stream of tiny text events, of tiny citation events, and of events that are
not JSON, and one `citations_summary` event of tiny rows; and a recording of
`--tiny-mib` MiB of text events in one gzip chunk, checked as `silvia qa check`
does (`check_recordings`). Each prints its peak growth and as a multiple of the
default `max_response_bytes`. Goal: every one under 1 GiB. Run it with
`PYTHONPATH` at an older tree to get that tree's figures.

Then the JSON shapes (issue 28, finding 6; `--only-shapes` for these alone), each just
under `--shape-mib` MiB (default 16) with both limits at that: arrays of small arrays,
of numbers, of short strings (one-byte and two-byte text), of tiny rows, one object of
many keys, arrays nested and objects nested (within `json.loads`'s depth), each in a
history (a message's unmodelled field) and in a stream (three citation events'
unmodelled field); then citation rows, rows that are not objects and messages that are
not objects, which the SDK reads into objects of its own (a `Citation`, a `RowError`).
Each "full" (the shape throughout) and "capped" (just under the count cap, padded to
the limit with one string). Each prints the values counted, its peak growth, that as a
multiple of the limit, and PASS if under the documented multiple (`DOCUMENTED`).
`--shape PREFIX` (repeatable) runs only the cases so named. A tree without the value
cap (`DEFAULTS.bytes_per_value`) gets the "full" cases only.

Then memory per kept event: a stream of `--events` unknown events (which the
`Turn` keeps, never drops), measured with `tracemalloc` after the turn is
built, divided by the number of events.

The exit status is 0 whether or not a goal is met.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial

MiB = 1024 * 1024
LIMITS = {"4 MiB": 4 * MiB, "16 MiB": 16 * MiB, "none": 2**62}
PIECE = 64 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))
# One call's peak, as a multiple of max_response_bytes, that the docs promise for every
# shape (docs/configuration.md, "Size limits"; `DEFAULTS.bytes_per_value`).
DOCUMENTED = 12.0


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def chunked_head(content_type: str) -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n"
        "transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    ).encode()


def sized_head(content_type: str, length: int, encoding: str) -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-encoding: {encoding}\r\n"
        f"content-length: {length}\r\nconnection: close\r\n\r\n"
    ).encode()


Writer = Callable[[socket.socket], None]


def cases(payload: int) -> dict[str, tuple[str, Writer]]:
    session = chunk(b'event: session\ndata: {"sessionId": "s1"}\n\n')
    bomb = gzip.compress(b" " * payload, compresslevel=9)

    def stream(first: bytes, piece: bytes, end: bytes = b"") -> Writer:
        framed = chunk(piece)

        def write(sock: socket.socket) -> None:
            sock.sendall(first)
            for _ in range(payload // len(piece)):
                sock.sendall(framed)
            sock.sendall(chunk(end) + chunk(b"") if end else chunk(b""))

        return write

    def whole(head: bytes, body: bytes) -> Writer:
        return lambda sock: sock.sendall(head + body)

    sse = chunked_head("text/event-stream") + session
    return {
        "endless-line": ("chat", stream(sse + chunk(b"data: "), b"x" * PIECE)),
        "huge-event": ("chat", stream(sse + chunk(b"event: text\ndata: "), b"y" * PIECE, b"\n\n")),
        "gzip-chat": ("chat", whole(sized_head("text/event-stream", len(bomb), "gzip"), bomb)),
        "gzip-history": ("get", whole(sized_head("application/json", len(bomb), "gzip"), bomb)),
        "huge-history": (
            "get",
            stream(chunked_head("application/json") + chunk(b'{"messages": ["'), b"w" * PIECE),
        ),
    }


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    writer: Writer


class Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = self.request.recv(65536)
            if not more:
                return
            data += more
        with contextlib.suppress(OSError):  # the client stopped reading: that is the point
            self.server.writer(self.request)  # type: ignore[attr-defined]


CHILD = """
import json, sys
from silvia_client import SilviaClient, SilviaError

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(l.split()[1]) * 1024 for l in lines if l.startswith(field + ":"))

url, endpoint, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
client = SilviaClient(base_url=url, token="t", max_retries=0, deadline=600,
                      max_event_bytes=limit, max_response_bytes=limit)
client.sessions  # everything imported before the baseline
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak (VmHWM) starts again from the current RSS
before = status("VmRSS")
try:
    if endpoint == "chat":
        client.chat.stream("hi").until_done()
    else:
        client.sessions.get("s1")
    outcome = "no error"
except SilviaError as error:
    outcome = type(error).__name__
print(json.dumps({"growth": status("VmHWM") - before, "outcome": outcome}))
"""


def tiny_bodies(size: int) -> dict[str, tuple[str, bytes]]:
    """The shapes that amplify most: (endpoint, the decoded body) of about `size` bytes."""
    session = b'event: session\ndata: {"sessionId":"s1"}\n\n'
    done = b"event: done\ndata: {}\n\n"

    def repeated(piece: bytes) -> bytes:
        return piece * (size // len(piece))

    row = b'{"source":"a"},'
    rows = repeated(row) + b'{"source":"a"}'
    summary_rows = row * (15 * MiB // len(row)) + b'{"source":"a"}'
    return {
        "tiny-rows-history": (
            "get",
            b'{"session":{"id":"s1"},"messages":[{"id":"m","role":"assistant",'
            b'"content":"x","citations":[' + rows + b"]}]}",
        ),
        "tiny-text-chat": (
            "chat",
            session + repeated(b'event: text\ndata: {"text":"a"}\n\n') + done,
        ),
        "tiny-citation-chat": (
            "chat",
            session + repeated(b'event: citation\ndata: {"source":"a"}\n\n') + done,
        ),
        "not-json-chat": ("chat", session + repeated(b"event: text\ndata: x\n\n") + done),
        "tiny-summary-chat": (
            "chat",
            session
            + b'event: citations_summary\ndata: {"citations":['
            + summary_rows
            + b"]}\n\n"
            + done,
        ),
        "recording-text": (
            "recording",
            session + repeated(b'event: text\ndata: {"text":"a"}\n\n') + done,
        ),
    }


TINY_CHILD = """
import gzip, json, sys
import httpx
from silvia_client import SilviaClient, SilviaError

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(l.split()[1]) * 1024 for l in lines if l.startswith(field + ":"))

endpoint, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as file:
    wire = file.read()  # gzip, as a server or a recording would hold it
kind = "application/json" if endpoint == "get" else "text/event-stream"

def handler(request):
    return httpx.Response(200, headers={"content-type": kind, "content-encoding": "gzip"},
                          stream=httpx.ByteStream(wire))

recording = None
if endpoint == "recording":
    from silvia_client.qa import check_recordings
    from silvia_client.testing import (RecordedChunk, RecordedRequest, RecordedResponse,
                                       Recording)
    recording = Recording(RecordedRequest("POST", "/api/claude", {"message": "hi"}),
                          RecordedResponse(200, (("content-type", "text/event-stream"),
                                                 ("content-encoding", "gzip")),
                                           (RecordedChunk(0.0, wire),)), None)
limits = {}
if len(sys.argv) > 3:  # both limits at this many bytes; otherwise the client's defaults
    limits = {"max_event_bytes": int(sys.argv[3]), "max_response_bytes": int(sys.argv[3])}
    # What loads on first use (the row models and their schemas) before the baseline:
    # a few MiB whatever the body, which would swamp a small limit's multiple.
    from silvia_client.citations import Citation, InlineCitation
    Citation.model_validate({"source": "a"})
    InlineCitation.model_validate({"source": "a", "offset": 0})
client = SilviaClient(base_url="https://silvia.test", token="t", max_retries=0,
                      http_client=httpx.Client(transport=httpx.MockTransport(handler)), **limits)
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")
before = status("VmRSS")
outcome = "no error"
try:
    if endpoint == "chat":
        kept = client.chat.send("hi")
    elif endpoint == "get":
        kept = client.sessions.get("s1")
    else:
        kept = check_recordings([recording])
        found = [f for prompt in kept.prompts for f in prompt.result.findings]
        outcome = "; ".join(sorted({f.rule for f in found})) or "no finding"
except SilviaError as error:
    outcome = type(error).__name__
print(json.dumps({"growth": status("VmHWM") - before, "outcome": outcome}))
"""


def tiny_shapes(size: int) -> None:
    import tempfile

    from silvia_client._wire import DEFAULTS

    limit = DEFAULTS.max_response_bytes
    print(
        f"\npeak RSS growth, the tiny shapes, {size // MiB} MiB each, default limits "
        f"(max_response_bytes {limit // MiB} MiB; goal: under 1 GiB)"
    )
    print(f"  {'case':20} {'peak growth':>12} {'x limit':>8}  outcome")
    for name, (endpoint, body) in tiny_bodies(size).items():
        with tempfile.NamedTemporaryFile(delete=False) as file:
            file.write(gzip.compress(body, 6))
        try:
            done = subprocess.run(
                [sys.executable, "-c", TINY_CHILD, endpoint, file.name],
                capture_output=True,
                text=True,
                cwd=HERE,  # not a tree's root: `-c` puts the directory first on sys.path
                timeout=900,
                check=True,
            )
        finally:
            os.unlink(file.name)
        result = json.loads(done.stdout)
        growth = result["growth"]
        verdict = "PASS" if growth < 1024 * MiB else "MISS"
        print(
            f"  {name:20} {growth / MiB:9.1f} MiB {growth / limit:7.2f}x  "
            f"{result['outcome']} {verdict}"
        )


# The shapes of JSON that grow most once decoded (issue 28, finding 6): each a function
# of how many pieces it holds. Their values, counted as `_json.most_values` does, are what
# the count cap bounds.
def array(piece: bytes) -> Callable[[int], bytes]:
    return lambda count: b"[" + b",".join([piece] * count) + b"]"


def many_keys(count: int) -> bytes:
    return b"{" + b",".join(b'"k%d":0' % i for i in range(count)) + b"}"


SHAPES: dict[str, Callable[[int], bytes]] = {
    "small-arrays": array(b"[0]"),  # 2 values in 4 bytes
    "small-numbers": array(b"300"),  # 1 in 4 (not one of the ints Python caches)
    "short-strings": array(b'"ab"'),  # 1 in 5
    "wide-strings": array('"\u0100"'.encode()),  # 1 in 5: one character of 2-byte text
    "tiny-rows": array(b'{"source":"a"}'),  # 3 in 15
    "many-keys": many_keys,  # one object: 2 values in about 12 bytes a key
    "deep-arrays": array(b"[" * 400 + b"]" * 400),  # 400 in 801, within json's depth
    "deep-objects": array(b'{"a":' * 400 + b"0" + b"}" * 400),  # 801 in 2,402
}


def counted(data: bytes) -> int:
    """`_json.most_values`, here too so that an older tree (which lacks it) is measured."""
    return 1 + sum(data.count(mark) for mark in (b"{", b"[", b",", b":"))


def pieces(shape: Callable[[int], bytes], size: int, values: int | None = None) -> bytes:
    """`shape` of at most `size` bytes, and of at most `values` values if given."""
    each = counted(shape(1000)) - counted(shape(999))
    count = size // (len(shape(1000)) - len(shape(999)))
    if values is not None:
        count = min(count, values // each - 10)
    made = shape(count)
    while len(made) > size:  # the keys grow longer than the estimate
        count = count * 9 // 10
        made = shape(count)
    return made


def filled(shape: Callable[[int], bytes], size: int, values: int | None = None) -> bytes:
    """A JSON object of about `size` bytes: `shape` under "v", then a string that pads it
    to `size` (a string costs about its size, decoded)."""
    made = pieces(shape, size, values)
    return b'{"v":' + made + b',"pad":"' + b"x" * max(size - len(made) - 20, 0) + b'"}'


# The rows the SDK reads into objects of its own, which cost most a value: tiny citation
# rows, rows that are not objects (each a `RowError`), messages that are not objects.
ROWS = {
    "cited-rows": array(b'{"source":"a"}'),
    "bad-rows": array(b"1000"),
    "bad-messages": array(b"1000"),
}
SESSION = b'event: session\ndata: {"sessionId":"s1"}\n\n'
DONE = b"event: done\ndata: {}\n\n"


def row_bodies(name: str, limit: int, values: int | None) -> tuple[bytes, bytes | None]:
    """(history, stream) of `name`'s rows, each padded to about `limit` bytes."""
    rows = pieces(ROWS[name], limit - 1000, values and values - 100)
    pad = b"x" * max(limit - len(rows) - 1000, 0)
    message = b'{"id":"m","role":"assistant","content":"x","citations":' + rows + b"}"
    messages = rows if name == "bad-messages" else b"[" + message + b"]"
    history = b'{"session":{"id":"s1","pad":"' + pad + b'"},"messages":' + messages + b"}"
    text = b'event: text\ndata: {"text":"' + pad + b'"}\n\n'
    if name == "cited-rows":  # as citation events: 6 values and an event each
        count = (len(rows) - 2) // 15 if values is None else (values - 100) // 6
        cited = b'event: citation\ndata: {"citation":{"source":"a"}}\n\n' * count
        return history, SESSION + text[: max(limit - len(cited) - 1000, 0)] + cited + DONE
    if name == "bad-rows":  # as one summary
        summary = b'event: citations_summary\ndata: {"citations":' + rows + b"}\n\n"
        return history, SESSION + text + summary + DONE
    return history, None


def row_history(name: str, limit: int, values: int | None) -> bytes:
    return row_bodies(name, limit, values)[0]


def row_stream(name: str, limit: int, values: int | None) -> bytes:
    return row_bodies(name, limit, values)[1] or b""


HEAD = b'{"session":{"id":"s1"},"messages":[{"id":"m","role":"assistant","content":"x","x":'


def shape_history(shape: Callable[[int], bytes], limit: int, values: int | None) -> bytes:
    return HEAD + filled(shape, limit - 1000, values and values - 100) + b"}]}"


def shape_stream(shape: Callable[[int], bytes], limit: int, values: int | None) -> bytes:
    data = filled(shape, limit // 3 - 1000, values and values // 3 - 100)
    event = b'event: citation\ndata: {"citation":{"source":"a","x":' + data + b"}}\n\n"
    return SESSION + event * 3 + DONE


def shape_bodies(limit: int, cap: int | None) -> Iterator[tuple[str, str, Callable[[], bytes]]]:
    """Each shape, as a history (one message's unmodelled field) and as a stream (three
    citation events, each with an unmodelled field), of just under `limit` bytes: "full"
    is the shape throughout (past the cap); "capped" holds `cap` values and is padded.
    Then the rows, as a history and, where they have one, as a stream. Each is (name,
    endpoint, a function that builds the body), so a case not run is not built."""
    variants = (("full", None), ("capped", cap)) if cap is not None else (("full", None),)
    for name, shape in SHAPES.items():
        for variant, values in variants:
            yield f"{name}-history-{variant}", "get", partial(shape_history, shape, limit, values)
            yield f"{name}-chat-{variant}", "chat", partial(shape_stream, shape, limit, values)
    for name in ROWS:
        for variant, values in variants:
            yield f"{name}-history-{variant}", "get", partial(row_history, name, limit, values)
            if name != "bad-messages":  # messages have no stream of their own
                yield f"{name}-chat-{variant}", "chat", partial(row_stream, name, limit, values)


def shapes(limit: int, documented: float, only: list[str]) -> None:
    import tempfile

    from silvia_client._wire import DEFAULTS

    per_value = getattr(DEFAULTS, "bytes_per_value", None)  # None: a tree before the cap
    cap = max(limit // per_value, DEFAULTS.min_values) if per_value else None
    print(
        f"\npeak RSS growth, the shapes, just under {limit / MiB:g} MiB each, both limits at "
        f"{limit / MiB:g} MiB (documented: under {documented:g} x the limit)"
    )
    print(f"  {'case':28} {'values':>10} {'peak growth':>12} {'x limit':>8}  outcome")
    for name, endpoint, build in shape_bodies(limit, cap):
        if only and not any(name.startswith(prefix) for prefix in only):
            continue
        body = build()
        with tempfile.NamedTemporaryFile(delete=False) as file:
            file.write(gzip.compress(body, 6))
        try:
            done = subprocess.run(
                [sys.executable, "-c", TINY_CHILD, endpoint, file.name, str(limit)],
                capture_output=True,
                text=True,
                cwd=HERE,  # not a tree's root: `-c` puts the directory first on sys.path
                timeout=900,
                check=True,
            )
        finally:
            os.unlink(file.name)
        result = json.loads(done.stdout)
        growth = result["growth"]
        verdict = "PASS" if growth < documented * limit else "MISS"
        print(
            f"  {name:28} {counted(body):>10,} {growth / MiB:9.1f} MiB {growth / limit:7.2f}x  "
            f"{result['outcome']} {verdict}"
        )


def per_kept_event(events: int) -> float:
    import tracemalloc

    import httpx

    from silvia_client import SilviaClient

    body = b'event: session\ndata: {"sessionId": "s1"}\n\n' + b"".join(
        f'event: shiny_{i % 7}\ndata: {{"n": {i}, "note": "kept as sent"}}\n\n'.encode()
        for i in range(events)
    )
    body += b"event: done\ndata: {}\n\n"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with SilviaClient(base_url="https://silvia.test", token="t", http_client=http) as client:
        client.chat.send("warm up")
        tracemalloc.start()
        turn = client.chat.send("hi")
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    assert len(turn.unknown_events) == events
    return kept / events


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payload-mib", type=int, default=64)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tiny-mib", type=int, default=32)
    parser.add_argument("--only-tiny", action="store_true", help="only the tiny shapes")
    parser.add_argument("--shape-mib", type=float, default=16)
    parser.add_argument("--documented", type=float, default=DOCUMENTED)
    parser.add_argument("--shape", action="append", default=[], help="only cases named so")
    parser.add_argument("--only-shapes", action="store_true", help="only the JSON shapes")
    args = parser.parse_args()
    if args.only_tiny:
        tiny_shapes(args.tiny_mib * MiB)
        return 0
    if args.only_shapes:
        shapes(int(args.shape_mib * MiB), args.documented, args.shape)
        return 0
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"peak RSS growth, {args.payload_mib} MiB sent per case (goal: under 4 x the limit)")
    print(f"  {'case':14} {'limit':>7} {'peak growth':>12} {'x limit':>8}  error")
    for name, (endpoint, writer) in cases(args.payload_mib * MiB).items():
        server.writer = writer
        for label, limit in LIMITS.items():
            done = subprocess.run(
                [sys.executable, "-c", CHILD, url, endpoint, str(limit)],
                capture_output=True,
                text=True,
                cwd=HERE,  # not a tree's root: `-c` puts the directory first on sys.path
                timeout=600,
                check=True,
            )
            result = json.loads(done.stdout)
            growth = result["growth"]
            ratio = f"{growth / limit:7.2f}x" if limit < 2**62 else "       -"
            verdict = "" if limit >= 2**62 else (" PASS" if growth < 4 * limit else " MISS")
            print(
                f"  {name:14} {label:>7} {growth / MiB:9.1f} MiB {ratio}  "
                f"{result['outcome']}{verdict}"
            )
    server.shutdown()
    tiny_shapes(args.tiny_mib * MiB)
    shapes(int(args.shape_mib * MiB), args.documented, args.shape)
    print(
        f"\nmemory per kept event: {per_kept_event(args.events):,.0f} bytes ({args.events:,} "
        "unknown events, kept by the Turn)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
