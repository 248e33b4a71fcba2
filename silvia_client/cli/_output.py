"""The one writer of the `silvia` command: what a stream cannot carry is escaped, never a crash.

`main` runs every command inside `writing_safely()`, which puts a
`SafeStream` around `sys.stdout` and `sys.stderr` for as long as the command
runs and puts the streams back after. So every `print`, every
`TerminalRenderer` write and every report line goes through
`SafeStream.write`: text the stream's encoding cannot carry with its own
error handler (a lone surrogate such as `"\\ud800"`, which is valid JSON, on
UTF-8; anything outside ASCII under `PYTHONIOENCODING=ascii`) is written
escaped (`\\ud800`, `\\xe9`), as `str.encode(encoding, "backslashreplace")`
writes it (`carried`, the core's cleaner for this medium). Text the stream
can carry is written as it is. Control characters are not this module's
business: `_render.clean` escapes them before.

`internal_error_lines` is what `main` writes for an exception no command
maps to a status (exit 4): one line naming the command and the exception's
type, never its message (which may quote the server, or a token); with
`debug`, the traceback before it, the bearer token blanked.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, cast

from .._text import carried

__all__ = [
    "SafeStream",
    "debug_from_environment",
    "internal_error_lines",
    "writing_safely",
]

DEBUG_VARIABLE = "SILVIA_DEBUG"
_MIN_SECRET_LENGTH = 8  # shorter values cannot be real tokens (the client's rule too)


class SafeStream:
    """A text stream that writes what its encoding cannot carry escaped.

    Everything but `write` and `writelines` is the wrapped stream's own
    (`flush`, `isatty`, `fileno`, `encoding`, ...).
    """

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        stream = self.wrapped
        encoding = getattr(stream, "encoding", None)
        errors = getattr(stream, "errors", None)
        return stream.write(carried(text, encoding, errors))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def _safe(stream: TextIO) -> TextIO:
    return stream if isinstance(stream, SafeStream) else cast(TextIO, SafeStream(stream))


@contextmanager
def writing_safely() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` wrapped in a `SafeStream` inside the block."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _safe(stdout), _safe(stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def debug_from_environment() -> bool:
    """Whether `SILVIA_DEBUG` asks for tracebacks (set, and not empty, `0`, `false` or `no`)."""
    return os.environ.get(DEBUG_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


def _blank_token(text: str) -> str:
    token = os.environ.get("SILVIA_TOKEN", "")
    return text.replace(token, "<token>") if len(token) >= _MIN_SECRET_LENGTH else text


def internal_error_lines(command: str, error: BaseException, *, debug: bool) -> str:
    """What stderr gets for an internal error: one line (after the traceback, with `debug`)."""
    from ._render import clean

    line = (
        f"silvia{' ' + command if command else ''}: internal error: {type(error).__name__} "
        "(a bug in silvia, not a finding about the server)"
    )
    if not debug:
        return f"{line}; --debug or {DEBUG_VARIABLE}=1 prints the traceback\n"
    shown = clean(_blank_token("".join(traceback.format_exception(error))))
    return f"{shown.rstrip()}\n{line}\n"
