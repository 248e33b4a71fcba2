"""`gc_paused()`: no cyclic garbage collection while a session body is decoded and read.

Reading a long session decodes a body of hundreds of thousands of containers,
then builds hundreds of thousands of small objects that all stay alive
(citation models, their dicts). CPython's generational collector does not know
which will: as they pile up it runs young collections that walk them, and full
collections that walk every object of the process, the caller's own included.
On a 5,000-message session those walks cost more than the reading itself, and
they find nothing: nothing made there is part of a cycle.

So `sessions.read_session` decodes and reads with the collector paused. What
it decoded dies before the pause ends (but for what the session keeps), so no
collection ever walks it; the next young collection, on the first allocation
after the pause, walks what the session keeps, once. Reference counting goes
on, so garbage without cycles is still freed at once; a cycle made meanwhile
(in any thread) waits until the pause ends.

The pause is for that one call and nothing else: it holds only the SDK's own
code (and its dependencies') over bytes already in memory (no I/O, no wait, no
callback into user code: the warnings for bad rows, whose handlers are the
caller's, are logged after it), and it ends when the call does, error or not.
A chat stream is not paused: user code runs between its events. A turn keeps
every streamed citation, so the stream instead makes each kept citation one
object the collector tracks (see `citations/_rows.py`): the row's target is
shared with the rows that sent the same one, its fields-set with the rows that
had the same keys, its fields live in the instance (CPython 3.11 and 3.12), and
its extra fields sit in a dict the collector does not track. A turn of 25,000
citations then stays under what triggers a full collection in a process of
160,000 objects.

Pauses nest and may overlap across threads: the collector is enabled again
when the last one ends, and only if it was enabled when the first began. Only
code that toggles the collector itself, from another thread during a pause,
can be surprised (its `gc.disable()` is undone when the pause ends).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_lock = threading.Lock()
_depth = 0
_enable_after = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (see the module's docstring)."""
    global _depth, _enable_after
    with _lock:
        if _depth == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _enable_after:
                gc.enable()
