"""`python -m silvia_client ARGS` as a subprocess that Ctrl-C interrupts, for the Ctrl-C tests."""

from __future__ import annotations

import sys

# A shell starts a background job with SIGINT ignored, inherited across exec (a CI run
# started with `&` never saw KeyboardInterrupt): the child puts Python's handler back.
_RUN = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('silvia_client', run_name='__main__', alter_sys=True)"
)


def silvia_command(*args: str) -> list[str]:
    """The command line of `python -m silvia_client ARGS`, with SIGINT at Python's handler."""
    return [sys.executable, "-c", _RUN, *args]
