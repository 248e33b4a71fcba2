"""`python -m silvia_client ARGS` as a subprocess that Ctrl-C interrupts, for the Ctrl-C tests."""

from __future__ import annotations

import sys

# A shell starts a background job with SIGINT ignored, and an ignored signal stays
# ignored across exec, so Python in the child would never raise KeyboardInterrupt
# (a CI run started with `&` saw the command finish its turn and exit 0). The child
# puts Python's own handler back before the command starts.
_RUN = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('silvia_client', run_name='__main__', alter_sys=True)"
)


def silvia_command(*args: str) -> list[str]:
    """The command line of `python -m silvia_client ARGS`, with SIGINT at Python's handler."""
    return [sys.executable, "-c", _RUN, *args]
