"""One turn's path through the SDK: the distinct functions a `client.chat.send(...)` calls.

    python benchmarks/turn_path.py [--scenario demo] [--api sync|async] [--all]

The reference server runs on 127.0.0.1 (`ReferenceServer().serve_loopback()`,
its own event loop in a background thread). One client on it sends a
warm-up turn (imports, caches, the pooled connection), then one more turn
under `sys.setprofile`, which sees every Python function call of this thread
(the server's thread is not profiled). Counted: the distinct code objects
run whose file is in the SDK's core, that is under `silvia_client/` but not
under `silvia_client/testing/`, `qa/` or `cli/`; comprehensions, generator
expressions and module bodies aside (a lambda counts: it is a function a reader
follows). A generator resumed many times
counts once.

Prints the count of functions, the count of modules they are in, and the
list grouped by module (with how many calls each function got: `--all` shows
them all, else the functions of each module on one line). Goal: <= 45
functions in <= 10 modules. Exit status 0 whether or not the goal is met.
This is a map of the path, not a timing: nothing here depends on the
machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import silvia_client
from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.testing import SCENARIO_COMMAND, SCENARIOS, ReferenceServer

TOKEN = "sk-bench-turn-path"
GOAL_FUNCTIONS = 45
GOAL_MODULES = 10
PACKAGE = Path(silvia_client.__file__).resolve().parent
OUTSIDE_CORE = ("testing", "qa", "cli")
ASIDE = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>"}


def core_module(code: CodeType) -> str | None:
    """`silvia_client.chat.events` for a code object of the SDK's core, else None."""
    try:
        relative = Path(code.co_filename).resolve().relative_to(PACKAGE)
    except ValueError:
        return None
    if relative.parts[0] in OUTSIDE_CORE or relative.suffix != ".py":
        return None
    parts = [PACKAGE.name, *relative.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class CallCounter:
    """Calls per code object, on this thread, inside the `with` block (`sys.setprofile`)."""

    def __init__(self) -> None:
        self.calls: Counter[CodeType] = Counter()

    def _hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.calls[frame.f_code] += 1

    def __enter__(self) -> CallCounter:
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.setprofile(None)


def _name(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)  # co_qualname: Python >= 3.11


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="demo", choices=sorted(SCENARIOS), metavar="NAME")
    parser.add_argument("--api", choices=["sync", "async"], default="sync")
    parser.add_argument("--all", action="store_true", help="one line per function")
    args = parser.parse_args()
    if SCENARIOS[args.scenario].fault is not None:
        parser.error("pick a scenario that completes (no fault)")
    message = f"{SCENARIO_COMMAND} {args.scenario}"

    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        if args.api == "sync":
            with SilviaClient(base_url=url, token=TOKEN) as client:
                client.chat.send(message)  # warm up
                with CallCounter() as counter:
                    client.chat.send(message)
        else:

            async def turns() -> CallCounter:
                async with AsyncSilviaClient(base_url=url, token=TOKEN) as client:
                    await client.chat.send(message)  # warm up
                    # The profile covers whatever the loop runs meanwhile: only this turn.
                    with CallCounter() as counter:
                        await client.chat.send(message)
                    return counter

            counter = asyncio.run(turns())
    calls = counter.calls

    by_module: dict[str, list[tuple[str, int]]] = {}
    for code, count in calls.items():
        module = core_module(code)
        if module is None or code.co_name in ASIDE:
            continue
        by_module.setdefault(module, []).append((_name(code), count))
    functions = sum(len(names) for names in by_module.values())
    print(
        f"one `client.chat.send(...)` of {args.scenario!r} ({args.api}) against the loopback "
        f"reference server, after a warm-up turn; silvia_client {silvia_client.__version__} "
        f"at {PACKAGE}; Python {sys.version.split()[0]}"
    )
    print(f"\n{functions} distinct SDK functions in {len(by_module)} modules:")
    for module in sorted(by_module):
        names = sorted(by_module[module])
        print(f"  {module} ({len(names)})")
        if args.all:
            for name, count in names:
                print(f"      {name}  x{count}")
        else:
            print("      " + ", ".join(f"{name} x{count}" for name, count in names))
    ok = functions <= GOAL_FUNCTIONS and len(by_module) <= GOAL_MODULES
    print(
        f"\n{functions} functions in {len(by_module)} modules  (goal <= {GOAL_FUNCTIONS} "
        f"functions in <= {GOAL_MODULES} modules)  {'PASS' if ok else 'MISS'}"
    )


if __name__ == "__main__":
    main()
