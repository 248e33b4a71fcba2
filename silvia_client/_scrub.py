"""The one scrubber: what the server sent, made fit to show.

Every string that comes from the server and may reach an exception, a log
record or the command line goes through a `Scrubber` first.
"""

from __future__ import annotations

__all__ = ["MIN_SECRET_LENGTH", "Scrubber"]

# A token shorter than this is not blanked: it cannot be a real secret (`"t"` in
# tests), and blanking it would blank ordinary text.
MIN_SECRET_LENGTH = 8


class Scrubber:
    """Blanks one client's bearer token in what the server sends back."""

    __slots__ = ("_secret",)

    def __init__(self, token: str | None) -> None:
        self._secret = token if token is not None and len(token) >= MIN_SECRET_LENGTH else None

    def bytes(self, body: bytes) -> bytes:
        """`body` with the token blanked, should a server echo it in an error."""
        if self._secret is None:
            return body
        return body.replace(self._secret.encode("utf-8", errors="replace"), b"<token>")

    def __repr__(self) -> str:
        return "Scrubber()"
