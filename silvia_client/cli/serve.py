"""`silvia serve`: the reference server on a real socket, until Ctrl-C or SIGTERM.

The first line on stdout, flushed at once, is `Silvia reference server on <url>`
(so `--port 0` can be read back). Ctrl-C ends it as every command (130); SIGTERM
is a clean stop (0). `-v` logs a line per request (`LoopbackServer(log=...)`:
never the token, a message or a body). Only its own names are answered (`Host`
an IP literal, `localhost` or an `--allow-host`; else 421), against DNS
rebinding. `--replay FILE...` serves recordings (`testing.ReplayServer`).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from ._common import UsageError, seconds, whole
from ._output import say

if TYPE_CHECKING:
    from ..testing import ReplayServer

__all__ = ["register", "run"]

_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")  # DNS labels; compose allows _


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia serve` to the command's subparsers."""
    parser = subparsers.add_parser(
        "serve",
        help="run the reference server on 127.0.0.1",
        description="Run the embedded reference server: the chat and session endpoints, scripted "
        "scenarios, citation targets by the server's rules. Pick a scenario per request "
        "with the x-silvia-scenario header or a message starting '/scenario <name>'.",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="address to bind (default %(default)s)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_host_name,
        metavar="NAME",
        help="also answer requests for this host name (repeatable, any case), as when a "
        "container is reached by its service name; by default only an IP address or "
        "localhost is answered, any other Host gets 421 (a web page's DNS rebinding)",
    )
    parser.add_argument(
        "--port",
        type=whole(0, 65535, "use 0 to 65535 (0: any free port)"),
        default=0,
        metavar="PORT",
        help="port to bind, 0 to 65535; 0 picks a free one",
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        help="require exactly this bearer token (default: accept any non-empty one); a client "
        "sets it in SILVIA_TOKEN",
    )
    parser.add_argument(
        "--scenario", metavar="NAME", help="the scenario a request gets when it names none"
    )
    parser.add_argument(
        "--pace",
        type=seconds(at_most=60),
        default=0.0,
        metavar="SECONDS",
        help="seconds between streamed deltas, 0 to 60 (default 0)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the scenarios with a line each, and exit"
    )
    parser.add_argument(
        "--replay",
        nargs="+",
        metavar="FILE",
        help="serve these recordings (from `silvia record`) instead of scenarios; pick one with "
        "the x-silvia-scenario header or '/recording <file stem>'; the first is the default",
    )
    parser.add_argument(
        "--timing",
        action="store_true",
        help="with --replay: send each recorded chunk at its recorded time",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log one line per request on stderr: method, path, status, scenario, duration "
        "(never the token, a message or a body)",
    )
    parser.set_defaults(run=run)


def _host_name(value: str) -> str:
    if not _HOST_NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"not a host name: {value!r} (a name alone: letters, digits, '-', '_' and dots)"
        )
    return value


def _replay_server(args: argparse.Namespace) -> ReplayServer:
    from ..testing import RecordingFormatError, ReplayServer

    if args.scenario or args.list or args.pace:
        raise UsageError("--replay serves recordings: it takes no --scenario, --list or --pace")
    try:
        return ReplayServer.from_files(args.replay, token=args.token, timing=args.timing)
    except RecordingFormatError as error:
        raise UsageError(f"{error.path}: {error}") from None
    except OSError as error:
        raise UsageError(f"cannot read {error.filename}: {error.strerror}") from None
    except ValueError as error:
        raise UsageError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    """Run `silvia serve`; the exit status."""
    from ..testing import (
        BROKEN_SCENARIOS,
        DEFAULT_SCENARIO,
        SCENARIO_HEADER,
        SCENARIOS,
        LoopbackServer,
        ReferenceServer,
    )

    if args.token is not None and not args.token.strip():
        raise UsageError("--token must not be empty")
    playable = {**SCENARIOS, **BROKEN_SCENARIOS}  # the broken ones last, for `silvia qa`
    server: ReferenceServer | ReplayServer
    if args.replay:
        server = _replay_server(args)
        picked = f"default recording {server.default!r} of {len(server.recordings)}"
        how = "'/recording <name>'"
    else:
        if args.timing:
            raise UsageError("--timing goes with --replay")
        if args.list:
            width = max(map(len, playable))
            for name, scenario in playable.items():
                print(f"{name:<{width}}  {scenario.description}")
            return 0
        default = args.scenario or DEFAULT_SCENARIO
        if default not in playable:
            raise UsageError(f"no scenario named {default!r} (see --list)")
        server = ReferenceServer(default_scenario=default, token=args.token, pace=args.pace)
        picked, how = f"default scenario {default!r}", "'/scenario <name>'"

    received: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        received.append(signum)

    # Both signals are only noted, and the loop looks now and then: a KeyboardInterrupt
    # raised into a lock wait with no timeout can be missed (seen on Python 3.10).
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        log = partial(say, "serve") if args.verbose else None
        loopback = LoopbackServer(
            server, host=args.host, port=args.port, log=log, allowed_hosts=args.allow_host
        )
        try:
            url = loopback.start()
        except OSError as error:
            say("serve", f"cannot listen on {args.host}:{args.port}: {error.strerror}")
            return 1
        try:
            print(f"Silvia reference server on {url}", flush=True)
            auth = "the --token bearer token" if args.token else "any bearer token"
            print(
                f"{picked}; pick one with the {SCENARIO_HEADER} header or "
                f"{how}; accepts {auth}; Ctrl-C to stop",
                file=sys.stderr,
                flush=True,
            )
            while not received:
                time.sleep(0.05)
        finally:
            loopback.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if signal.SIGINT in received:  # Ctrl-C: the same ending as every other command's
        raise KeyboardInterrupt
    return 0
