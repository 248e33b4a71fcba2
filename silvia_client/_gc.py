"""`gc_paused()`: no cyclic garbage collection while a large value is being built.

Reading a long session builds hundreds of thousands of small objects that all
stay alive (citation models, their dicts, their targets). CPython's
generational collector does not know they will: as they pile up it runs full
collections, each one walking every object of the process, the caller's own
included. On a 5,000-message session those walks cost more than the reading
itself, and they find nothing: the objects are alive and refer to no cycle.

So the reading runs with the collector paused. Reference counting goes on,
so garbage without cycles is still freed at once; a cycle made meanwhile (in
any thread) waits until the pause ends, and the objects made during the pause
are looked at by the next young-generation collection, as usual. Pauses nest
and may overlap across threads: the collector is enabled again when the last
one ends, and only if it was enabled when the first began. Only code that
toggles the collector itself, from another thread during a pause, can be
surprised (its `gc.disable()` is undone when the pause ends).
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
