"""What an SDK error suggests, said for a terminal user: `SILVIA_TOKEN`, not `token=...`.

`terminal_message(error)` is the error's text with the client's hints for Python
code (`token=...`, `base_url=...`, `web_url=...`) named as the command line names
them; the error itself is left as it is. A 401 gets the command line's own hint
(`SILVIA_TOKEN` unset, or refused), none from the embedded server, which plays it.
Nothing here reads or prints a token: only whether `SILVIA_TOKEN` is set.
"""

from __future__ import annotations

import os
import re

from ..errors import AuthenticationError

AUTH_HINT_UNSET = "no token was sent: set SILVIA_TOKEN to the server's bearer token"
AUTH_HINT_REFUSED = (
    "the server refused the token in SILVIA_TOKEN: set it to the server's bearer token "
    "(for `silvia serve --token T`, that is T)"
)

# The client's hints for Python code, and what the command line has instead. Whole
# phrases first (so that no sentence names SILVIA_TOKEN twice), then single arguments.
_REWRITES = (
    (r",? or pass token=\.\.\.", ""),
    (r"pass the token as token=\.\.\. or in SILVIA_TOKEN", "put the token in SILVIA_TOKEN"),
    (r"pass the token, or leave token out to use SILVIA_TOKEN", "set SILVIA_TOKEN"),
    (
        r"pass base_url=\.\.\. or set the SILVIA_BASE_URL environment variable",
        "pass --base-url or set SILVIA_BASE_URL",
    ),
    (r"\btoken=\.\.\.", "SILVIA_TOKEN"),
    (r"\bbase_url=\.\.\.", "--base-url"),
    (r"\bweb_url=\.\.\.", "--web-url"),
)
# What a client appends to a 401's message: " (...token...)" at its end.
_AUTH_SUFFIX = re.compile(r"\s*\([^()]*(?:token=|SILVIA_TOKEN)[^()]*\)\s*$")


def _rewritten(text: str) -> str:
    for pattern, replacement in _REWRITES:
        text = re.sub(pattern, replacement, text)
    return text


def terminal_message(error: BaseException, *, embedded: bool = False) -> str:
    if not isinstance(error, AuthenticationError):
        return _rewritten(str(error))
    said = _AUTH_SUFFIX.sub("", str(getattr(error, "message", ""))) or "authentication failed"
    text = f"{error.status_code}: {_rewritten(said)}"
    if not embedded:
        hint = AUTH_HINT_REFUSED if os.environ.get("SILVIA_TOKEN") else AUTH_HINT_UNSET
        text += f" ({hint})"
    if error.request_id:
        text += f" (request id {error.request_id})"
    return text
