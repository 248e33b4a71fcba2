"""Which server a command talks to: `--base-url`, else `SILVIA_BASE_URL`, else the embedded one.

`choose_server(base_url, command)` makes the choice, says it on stderr, and
returns a `ServerChoice`: the keyword arguments for a client
(`client_options()`) and, for the embedded reference server, its in-process
transport. The token is never chosen here: the client reads `SILVIA_TOKEN`,
and the embedded server accepts any non-empty token.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from ..testing import InProcessTransport

__all__ = ["EMBEDDED_TOKEN", "ServerChoice", "choose_server", "shown_url"]

EMBEDDED_TOKEN = "silvia-cli"  # the embedded reference server accepts any non-empty token


@dataclass(frozen=True)
class ServerChoice:
    """The server a command uses: its URL, and the in-process transport when it is embedded."""

    base_url: str
    source: str  # "--base-url", "SILVIA_BASE_URL" or "embedded"
    transport: InProcessTransport | None = None

    @property
    def embedded(self) -> bool:
        return self.transport is not None

    def client_options(self) -> dict[str, Any]:
        """`base_url` (and the embedded server's token) for `SilviaClient(...)`."""
        if self.embedded:
            return {"base_url": self.base_url, "token": EMBEDDED_TOKEN}
        return {"base_url": self.base_url}


def shown_url(url: str) -> str:
    """`url` as it may be printed: no credentials, query or fragment."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    shown = f"{parts.scheme}://{host}{parts.path}"
    token = os.environ.get("SILVIA_TOKEN", "")
    return shown.replace(token, "<token>") if len(token) >= 8 else shown


def choose_server(base_url: str | None, command: str) -> ServerChoice:
    """The flag, else the environment, else the embedded reference server; said on stderr."""
    if base_url:
        choice = ServerChoice(base_url, "--base-url")
    elif os.environ.get("SILVIA_BASE_URL"):
        choice = ServerChoice(os.environ["SILVIA_BASE_URL"], "SILVIA_BASE_URL")
    else:
        from ..testing import IN_PROCESS_URL, ReferenceServer

        print(
            f"silvia {command}: no --base-url and no SILVIA_BASE_URL: using the embedded "
            "reference server (in this process, made-up data)",
            file=sys.stderr,
            flush=True,
        )
        return ServerChoice(IN_PROCESS_URL, "embedded", ReferenceServer().transport())
    print(
        f"silvia {command}: using {shown_url(choice.base_url)} (from {choice.source})",
        file=sys.stderr,
        flush=True,
    )
    return choice
