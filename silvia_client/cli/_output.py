"""The one writer of the `silvia` command: what a stream cannot carry is escaped, never a crash.

`main` runs every command inside `writing_safely()`: `sys.stdout` and `sys.stderr`
wrapped in a `SafeStream`, which writes what the stream's encoding cannot carry
(a lone surrogate on UTF-8, anything outside ASCII under `PYTHONIOENCODING=ascii`)
escaped (`carried`). `say` is a command's
line on stderr, server text in it cleaned (`terminal_text`). `internal_error_lines`
is what an internal error (exit 4) writes: the command and the exception's type,
never its message; with `debug`, the traceback first, the token blanked.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, cast

from .._text import terminal_text

DEBUG_VARIABLE = "SILVIA_DEBUG"
_MIN_SECRET_LENGTH = 8  # shorter values cannot be real tokens (the client's rule too)


def carried(text: str, encoding: str | None, errors: str | None = None) -> str:
    """`text` as a stream in `encoding` (and `errors`; None, a `StringIO`, takes anything)
    can write it: else backslash-escaped."""
    if encoding is None or text.isascii():
        return text
    try:
        text.encode(encoding, errors or "strict")
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    return text


class SafeStream:
    """A text stream that writes what its encoding cannot carry escaped; else the stream's own."""

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
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _safe(stdout), _safe(stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def say(command: str, text: str) -> None:
    """Write `silvia COMMAND: text` on stderr, controls escaped, at once."""
    print(terminal_text(f"silvia {command}: {text}"), file=sys.stderr, flush=True)


def debug_from_environment() -> bool:
    """Whether `SILVIA_DEBUG` asks for tracebacks (set, and not empty, `0`, `false` or `no`)."""
    return os.environ.get(DEBUG_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


def blank_token(text: str) -> str:
    """`text` with `SILVIA_TOKEN`'s value, if it could be a token, said as `<token>`."""
    token = os.environ.get("SILVIA_TOKEN", "")
    return text.replace(token, "<token>") if len(token) >= _MIN_SECRET_LENGTH else text


def internal_error_lines(command: str, error: BaseException, *, debug: bool) -> str:
    line = (
        f"silvia{' ' + command if command else ''}: internal error: {type(error).__name__} "
        "(a bug in silvia, not a finding about the server)"
    )
    if not debug:
        return f"{line}; --debug or {DEBUG_VARIABLE}=1 prints the traceback\n"
    shown = terminal_text(blank_token("".join(traceback.format_exception(error))))
    return f"{shown.rstrip()}\n{line}\n"
