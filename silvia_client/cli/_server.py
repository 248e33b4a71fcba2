"""Which server a command talks to: `--base-url`, else `SILVIA_BASE_URL`, else the embedded one.

`choose_server(base_url, command)` makes the choice, checks the URL, says on
stderr which server it chose and why, and returns a `ServerChoice`: the keyword
arguments for a client (`client_options()`) and, for the embedded reference
server, the server itself (`reference`) and an in-process transport to it
(`transport`). A command for which the embedded server makes no sense (`silvia
session show`: it keeps no sessions between runs) passes `embedded=False`, and
then having neither the flag nor the variable is a `UsageError`.

The token is never chosen here: the client reads `SILVIA_TOKEN`, and the
embedded server accepts any non-empty token. What is printed is the URL without
user info, query or fragment, and never the token.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._args import UsageError

if TYPE_CHECKING:
    from ..testing import InProcessTransport, ReferenceServer

__all__ = ["EMBEDDED_TOKEN", "ServerChoice", "choose_server", "say_embedded", "shown_url"]

EMBEDDED_TOKEN = "silvia-cli"  # the embedded reference server accepts any non-empty token
EMBEDDED = "the embedded reference server (in this process, made-up data)"


@dataclass(frozen=True)
class ServerChoice:
    """The server a command uses: its URL, where the URL came from, and the embedded server."""

    base_url: str
    source: str  # "--base-url", "SILVIA_BASE_URL" or "embedded"
    reference: ReferenceServer | None = None

    @property
    def embedded(self) -> bool:
        return self.reference is not None

    @property
    def transport(self) -> InProcessTransport | None:
        """A new in-process transport to the embedded server; None for a real one."""
        return self.reference.transport() if self.reference is not None else None

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


def _say(command: str, what: str) -> None:
    print(f"silvia {command}: {what}", file=sys.stderr, flush=True)


def say_embedded(command: str) -> None:
    """Say on stderr that `command` plays on the embedded server, whatever is configured."""
    _say(command, f"playing on {EMBEDDED}; it never talks to an API server")


def choose_server(base_url: str | None, command: str, *, embedded: bool = True) -> ServerChoice:
    """The flag, else the environment, else (when `embedded`) the embedded server; said on stderr.

    Raises `UsageError` for a URL that is not absolute http(s), or that holds
    credentials, a query or a fragment (the client would refuse it too), and
    for no server at all when the embedded one is not an option.
    """
    from ..citations import is_http_url

    if base_url is not None:
        choice = ServerChoice(base_url, "--base-url")
    elif os.environ.get("SILVIA_BASE_URL"):
        choice = ServerChoice(os.environ["SILVIA_BASE_URL"], "SILVIA_BASE_URL")
    elif not embedded:
        raise UsageError(
            "no --base-url and no SILVIA_BASE_URL: name the server to ask (the embedded "
            "reference server keeps nothing between runs)"
        )
    else:
        from ..testing import IN_PROCESS_URL, ReferenceServer

        _say(command, f"no --base-url and no SILVIA_BASE_URL: using {EMBEDDED}")
        return ServerChoice(IN_PROCESS_URL, "embedded", ReferenceServer())
    if not is_http_url(choice.base_url):
        raise UsageError(f"{choice.source} must be an absolute http(s) URL")
    parts = urlsplit(choice.base_url)
    if "@" in parts.netloc:
        raise UsageError(
            f"{choice.source} must not hold credentials (user:password@): "
            "the token goes in SILVIA_TOKEN"
        )
    if parts.query or parts.fragment or "?" in choice.base_url or "#" in choice.base_url:
        raise UsageError(f"{choice.source} must not have a query (?) or a fragment (#)")
    _say(command, f"using {shown_url(choice.base_url)} (from {choice.source})")
    return choice
