"""`silvia serve`: the reference server on a real socket, until Ctrl-C or SIGTERM.

The first line on stdout is `Silvia reference server on <url>`, flushed at
once, so a script (or a test) can start it with `--port 0` and read the port.
The bearer token given with `--token` is never printed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the reference server on 127.0.0.1",
        description=(
            "Run the embedded reference server: the chat and session endpoints, scripted "
            "scenarios, citation targets by the server's rules. Pick a scenario per request "
            "with the x-silvia-scenario header or a message starting '/scenario <name>'."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one")
    parser.add_argument(
        "--token", help="require exactly this bearer token (default: accept any non-empty one)"
    )
    parser.add_argument("--scenario", help="the scenario a request gets when it names none")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds between streamed deltas (default 0)"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the scenarios with a line each, and exit"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..testing import (
        BROKEN_SCENARIOS,
        DEFAULT_SCENARIO,
        SCENARIO_HEADER,
        SCENARIOS,
        ReferenceServer,
    )

    playable = {**SCENARIOS, **BROKEN_SCENARIOS}  # the broken ones last, for `silvia qa`
    if args.list:
        width = max(map(len, playable))
        for name, scenario in playable.items():
            print(f"{name:<{width}}  {scenario.description}")
        return 0
    default = args.scenario or DEFAULT_SCENARIO
    if default not in playable:
        print(f"silvia serve: no scenario named {default!r} (see --list)", file=sys.stderr)
        return 2
    if args.token is not None and not args.token.strip():
        print("silvia serve: --token must not be empty", file=sys.stderr)
        return 2
    server = ReferenceServer(default_scenario=default, token=args.token, pace=args.pace)

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    # Both signals just set the event, and the wait wakes up now and then: a
    # KeyboardInterrupt raised into a lock wait that never times out can be
    # missed (seen on Python 3.10), and then the server would not stop.
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        loopback = server.serve_loopback(host=args.host, port=args.port)
        try:
            url = loopback.start()
        except OSError as error:
            print(
                f"silvia serve: cannot listen on {args.host}:{args.port}: {error.strerror}",
                file=sys.stderr,
            )
            return 1
        try:
            print(f"Silvia reference server on {url}", flush=True)
            auth = "the --token bearer token" if args.token else "any bearer token"
            print(
                f"default scenario {default!r}; pick one with the {SCENARIO_HEADER} header or "
                f"'/scenario <name>'; accepts {auth}; Ctrl-C to stop",
                file=sys.stderr,
                flush=True,
            )
            while not stop.wait(0.2):
                pass
        finally:
            loopback.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
