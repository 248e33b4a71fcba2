"""Which server a command talks to: `--base-url`, else `SILVIA_BASE_URL`, else the embedded one.

`choose_server` checks the URL, says on stderr which server it chose and why, and
returns a `ServerChoice`: a client's keyword arguments and, for the embedded
reference server, the server and an in-process transport to it. With
`embedded=False` (`session show`: the embedded server keeps nothing between
runs), having neither is a `UsageError`. The token is the client's to read
(`SILVIA_TOKEN`); a URL is printed without user info, query or fragment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._common import UsageError
from ._output import blank_token, say

if TYPE_CHECKING:
    from ..testing import InProcessTransport, ReferenceServer

EMBEDDED_TOKEN = "silvia-cli"  # the embedded reference server accepts any non-empty token
EMBEDDED = "the embedded reference server (in this process, made-up data)"


@dataclass(frozen=True)
class ServerChoice:
    base_url: str
    source: str  # "--base-url", "SILVIA_BASE_URL" or "embedded"
    reference: ReferenceServer | None = None

    @property
    def embedded(self) -> bool:
        return self.reference is not None

    @property
    def transport(self) -> InProcessTransport | None:
        return self.reference.transport() if self.reference is not None else None

    def client_options(self) -> dict[str, Any]:
        if self.embedded:
            return {"base_url": self.base_url, "token": EMBEDDED_TOKEN}
        return {"base_url": self.base_url}


def shown_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return blank_token(f"{parts.scheme}://{host}{parts.path}")


def choose_server(base_url: str | None, command: str, *, embedded: bool = True) -> ServerChoice:
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

        say(command, f"no --base-url and no SILVIA_BASE_URL: using {EMBEDDED}")
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
    say(command, f"using {shown_url(choice.base_url)} (from {choice.source})")
    return choice
