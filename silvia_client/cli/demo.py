"""`silvia demo`: a turn on the embedded reference server, in-process, nothing to set up.

It streams the `demo` turn with its markers, then the sources with their links
(`resolve_citation`'s, so never a provider), then reloads the session and says whether
the reload agrees with the live turn (status 1 when not, or on an SDK error). No
network: `--base-url` is a usage error that points to `--web-url`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import SilviaError
from ._common import UsageError, add_options, check_web_url, client_for, seconds
from ._output import say
from ._server import EMBEDDED, ServerChoice

if TYPE_CHECKING:
    from ..chat import Turn
    from ..citations import Citation
    from ..sessions import Session

__all__ = ["register", "run"]

QUESTION = "Where do my accounts stand, and what should I know about Apple, savings and my IRA?"


class _BaseUrlIsNotTheWebUrl(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        parser.error(
            "--base-url is the API server's URL, and silvia demo always plays on the "
            "embedded reference server; for the web app's origin (absolute account "
            "links) use --web-url"
        )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia demo` to the command's subparsers."""
    parser = subparsers.add_parser(
        "demo",
        help="stream a turn from the embedded reference server (no account, no network)",
        description="Start the reference server in-process, stream a turn that cites your "
        "accounts, a ticker, a web page and a tax document, print it as it arrives with numbered "
        "citation markers, then the sources with their links, then check that reloading "
        "the session gives the same citations and targets.",
    )
    parser.add_argument(
        "--pace",
        type=seconds(at_most=10),
        default=0.01,
        metavar="SECONDS",
        help="pause between streamed pieces, for a typing effect (default %(default)s; 0: none)",
    )
    add_options(parser, "--web-url")
    parser.add_argument(
        "--base-url", nargs="?", action=_BaseUrlIsNotTheWebUrl, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--scenario",
        default=None,
        metavar="NAME",
        help="play another scenario of the library instead (see `silvia serve --list`)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `silvia demo`; the exit status."""
    from ..testing import DEFAULT_SCENARIO, IN_PROCESS_URL, ReferenceServer
    from ._render import TerminalRenderer

    out = sys.stdout
    check_web_url(args.web_url)
    server = ReferenceServer(pace=args.pace)
    scenario = args.scenario or DEFAULT_SCENARIO
    if scenario not in server.scenarios:
        raise UsageError(f"no scenario named {scenario!r} (see `silvia serve --list`)")
    message = QUESTION if scenario == DEFAULT_SCENARIO else f"/scenario {scenario}"
    say("demo", f"playing on {EMBEDDED}; it never talks to an API server")

    # The idle timeout only has to outlast the pacing (and cut a stalling scenario short).
    choice = ServerChoice(IN_PROCESS_URL, "embedded", server)
    with client_for(choice, idle_timeout=5.0 + 2 * args.pace, max_retries=0) as client:
        print(f"You: {message}\n", file=out)
        render = TerminalRenderer(out, web_url=args.web_url)
        try:
            render.write("Silvia: ")
            with client.chat.stream(message) as stream:
                for event in stream:
                    render.event(event)
                turn = stream.until_done()
            render.write("\n")
            session = client.sessions.get(turn.session_id) if turn.session_id else None
        except SilviaError as error:
            render.end_line()
            said, partial = f"{type(error).__name__}: {error}", getattr(error, "turn", None)
            if partial is not None:
                held = f"{len(partial.text)} characters of text and {len(partial.inline_citations)}"
                said += f" (the partial turn holds {held} citations)"
            say("demo", said)
            return 1
        except KeyboardInterrupt:  # "interrupted" goes on a line of its own
            render.end_line()
            raise
    render.sources(turn.inline_citations, turn.citations)
    agree, detail = _reload_agrees(turn, session)
    print(f"\nReloaded session {turn.session_id}: {detail}", file=out, flush=True)
    if not agree:
        say("demo", "the reloaded session does not match the live turn")
        return 1
    return 0


def _key(citation: Citation) -> tuple[object, ...]:
    return (citation.source, citation.title, citation.cited_text, citation.target)


def _reload_agrees(turn: Turn, session: Session | None) -> tuple[bool, str]:
    """Whether the reload has the live turn's citations and targets (offsets aside), said."""
    if session is None:
        return False, "no session id came with the turn"
    answers = [m for m in session.messages if m.role == "assistant"]
    if not answers:
        return False, "live and reload DISAGREE: the session holds no answer"
    stored = answers[-1]
    same_citations = list(map(_key, turn.citations)) == list(map(_key, stored.citations))
    same_inline = list(map(_key, turn.inline_citations)) == list(map(_key, stored.inline_citations))
    counts = f"{len(turn.citations)} citations, {len(turn.inline_citations)} inline"
    if same_citations and same_inline:
        return True, f"live and reload agree ({counts}, same targets)"
    which = "citations" if not same_citations else "inline citations"
    return False, f"live and reload DISAGREE on the {which} ({counts} live)"
