"""Sequential turns over TLS through one client: reusing the connection against a new one each.

    python benchmarks/bench_reuse_tls.py [--turns N] [--rounds R]

A keep-alive server over TLS on 127.0.0.1, in its own process (this script,
started again with `--serve`): uvicorn serving an sse-starlette app whose
`POST /api/claude` answers a short turn (`session`, eight `text` deltas, a
`citation` with a target, `citations_summary`, `done`), with a certificate
from a throwaway CA (`trustme`) that the client trusts.

Sides, each `--turns` short turns one after the other (`until_done()` each),
sync and async, interleaved for `--rounds` rounds:

* reuse: one `SilviaClient` (`AsyncSilviaClient`) on an `httpx.Client`
  (`httpx.AsyncClient`) trusting the CA: a connection is reused when it went
  back to the pool after the turn;
* new connection each: the same, with `httpx.Limits(max_keepalive_connections=0)`,
  so that every turn opens a TCP connection and does a TLS handshake.

The server counts the distinct client ports it saw per side: the connections
each side opened. Prints each side's median turns/s and connections, and the
median of the per-round ratios reuse / new connection each. Goal: >= 2x.
Exit status 0 whether or not the goal is met.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx

from silvia_client import AsyncSilviaClient, SilviaClient

GOAL = 2.0
TOKEN = "sk-bench"
_TURN_TEXT = ["Your ", "checking ", "balance ", "is ", "$4,210.00 ", "as ", "of ", "today."]
_CITATION = {
    "type": "search_result_location",
    "source": "silvia://your-account/checking",
    "title": "Checking",
    "cited_text": "Balance: $4,210.00",
    "target": {"kind": "account", "accountId": "acc_5f2b9c1e7d4a4b8e9f0a", "provider": "plaid"},
}


# --- the server process -------------------------------------------------------------


def serve(cert: str, key: str) -> None:
    """Serve the app over TLS on a free loopback port; print the port; stop at end of stdin."""
    import uvicorn
    from sse_starlette.sse import EventSourceResponse
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    ports: dict[str, set[int]] = {}

    async def events(session_id: str) -> AsyncIterator[dict[str, str]]:
        yield {"event": "session", "data": json.dumps({"sessionId": session_id})}
        for piece in _TURN_TEXT:
            yield {"event": "text", "data": json.dumps({"text": piece})}
        yield {"event": "citation", "data": json.dumps({"citation": _CITATION})}
        yield {"event": "citations_summary", "data": json.dumps({"citations": [_CITATION]})}
        yield {"event": "done", "data": "{}"}

    async def chat(request: Request) -> EventSourceResponse:
        body = await request.json()
        side = str(body.get("message", ""))
        if request.client is not None:
            ports.setdefault(side, set()).add(request.client.port)
        return EventSourceResponse(events("sess_bench"))

    async def stats(request: Request) -> JSONResponse:
        # Distinct client ports per side since the last call: the connections it opened.
        counts = {side: len(seen) for side, seen in ports.items()}
        ports.clear()
        return JSONResponse(counts)

    app = Starlette(routes=[Route("/api/claude", chat, methods=["POST"]), Route("/stats", stats)])
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY on the connections only
    # then, and without it Nagle's algorithm holds each body write for the client's
    # delayed ACK (40 ms a response).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app, ssl_certfile=cert, ssl_keyfile=key, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[listener]))
        await asyncio.to_thread(sys.stdin.read)  # until the parent closes our stdin
        server.should_exit = True
        await task

    asyncio.run(main())


# --- the client side -----------------------------------------------------------------


def _sync_side(url: str, context: ssl.SSLContext, reuse: bool, label: str) -> Callable[[], int]:
    limits = httpx.Limits() if reuse else httpx.Limits(max_keepalive_connections=0)

    def run(turns: int) -> int:
        http = httpx.Client(verify=context, limits=limits)
        with SilviaClient(base_url=url, token=TOKEN, http_client=http) as client:
            for _ in range(turns):
                with client.chat.stream(label) as stream:
                    assert stream.until_done().complete
        return turns

    return run  # type: ignore[return-value]


def _async_side(url: str, context: ssl.SSLContext, reuse: bool, label: str) -> Callable[[], int]:
    limits = httpx.Limits() if reuse else httpx.Limits(max_keepalive_connections=0)

    async def turns_of(turns: int) -> int:
        http = httpx.AsyncClient(verify=context, limits=limits)
        async with AsyncSilviaClient(base_url=url, token=TOKEN, http_client=http) as client:
            for _ in range(turns):
                async with client.chat.stream(label) as stream:
                    assert (await stream.until_done()).complete
        return turns

    def run(turns: int) -> int:
        return asyncio.run(turns_of(turns))

    return run  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", nargs=2, metavar=("CERT", "KEY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        return

    import trustme

    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1")
    context = ssl.create_default_context()
    ca.configure_trust(context)
    with tempfile.TemporaryDirectory() as folder:
        cert, key = Path(folder, "cert.pem"), Path(folder, "key.pem")
        certificate.cert_chain_pems[0].write_to_path(str(cert))
        for pem in certificate.cert_chain_pems[1:]:
            pem.write_to_path(str(cert), append=True)
        certificate.private_key_pem.write_to_path(str(key))
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(cert), str(key)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            url = f"https://127.0.0.1:{child.stdout.readline().strip()}"
            measure(url, context, args)
        finally:
            assert child.stdin is not None
            child.stdin.close()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:  # uvicorn's graceful shutdown can hang here
                child.kill()
                child.wait()


def measure(url: str, context: ssl.SSLContext, args: argparse.Namespace) -> None:
    sides: dict[str, Callable[[int], int]] = {}
    for api, make in (("sync", _sync_side), ("async", _async_side)):
        for reuse in (True, False):
            label = f"{api}, {'reuse' if reuse else 'new connection each'}"
            sides[label] = make(url, context, reuse, label)  # type: ignore[assignment]
    for run in sides.values():
        run(3)  # warm up (and wait for the server to accept)
    httpx.get(f"{url}/stats", verify=context)
    print(
        f"{args.turns} sequential turns per side over TLS on loopback (uvicorn + sse-starlette "
        f"in its own process), {args.rounds} interleaved rounds, Python {sys.version.split()[0]}"
    )
    rounds: list[dict[str, float]] = []
    connections: dict[str, list[int]] = {label: [] for label in sides}
    for _ in range(args.rounds):
        times = {}
        for label, run in sides.items():
            start = time.perf_counter()
            run(args.turns)
            times[label] = time.perf_counter() - start
        rounds.append(times)
        opened = httpx.get(f"{url}/stats", verify=context).json()
        for label in sides:
            connections[label].append(opened.get(label, 0))
    for label in sides:
        seconds = statistics.median(r[label] for r in rounds)
        opened = statistics.median(connections[label])
        print(
            f"  {label:32} {args.turns / seconds:7.1f} turns/s  "
            f"{opened:6.1f} connections per {args.turns} turns"
        )
    for api in ("sync", "async"):
        ratio = statistics.median(
            r[f"{api}, new connection each"] / r[f"{api}, reuse"] for r in rounds
        )
        print(
            f"  {api:5} reuse / new connection each: {ratio:.2f}x  (goal >= {GOAL}x)  "
            f"{'PASS' if ratio >= GOAL else 'MISS'}"
        )


if __name__ == "__main__":
    main()
