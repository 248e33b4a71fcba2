"""`SilviaError` and `ConfigurationError`: the root of the tree, below every other module.

The ground floor (`citations`) raises these two, and `errors.py`, which draws the
whole tree and is where users import every error from, sits above the turn
(`StreamError.turn` is a `Turn`). So the root lives here, importing nothing, and
`errors.py` re-exports it: the core's imports form no cycle.

`SilviaError.__reduce__` makes every error pickle (and `copy.deepcopy`), so one
raised in a worker process reaches the parent as itself: the error is rebuilt
from its `args` without its `__init__` (most take keyword-only arguments, which
`Exception`'s own pickling, `cls(*args)`, cannot pass), then its attributes
(`status_code`, `request_id`, `turn`, ...) are put back as they were.
"""

from __future__ import annotations

__all__ = ["ConfigurationError", "SilviaError"]


class SilviaError(Exception):
    """The root of every error the SDK raises."""

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(cls: type[SilviaError], args: tuple[object, ...]) -> SilviaError:
    """An error of `cls` with `args`, its `__init__` not run: pickle then sets its attributes."""
    return cls.__new__(cls, *args)


class ConfigurationError(SilviaError, ValueError):
    """The client was configured in a way that cannot work."""
