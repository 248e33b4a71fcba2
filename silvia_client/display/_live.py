"""`live(stream)` and `alive(stream)`: a turn streamed into a notebook cell, then its view
(the chat layers take no display argument). IPython is never imported here (a kernel has
it in `sys.modules`), nor any model or stream (they are named for types only).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..errors import ConfigurationError
from ._html import text_html, view

if TYPE_CHECKING:
    from .._async._stream import AsyncChatStream
    from .._sync._stream import ChatStream
    from ..chat._turn import Turn

UPDATES_PER_SECOND = 10.0


class Throttle:
    """Whether an update may go out now: the first, then one `1 / per_second` seconds (by
    `clock`, monotonic: a test passes a fake one) after the last that went."""

    def __init__(
        self, per_second: float = UPDATES_PER_SECOND, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not per_second > 0:
            # The SDK's rule for a value it cannot honour (a `ValueError` too).
            raise ConfigurationError(f"per_second must be a positive number, not {per_second!r}")
        self.interval = 1.0 / per_second
        self.clock = clock
        self._last: float | None = None

    def ready(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True


def streaming_html(text: str) -> str:
    """What the cell shows while the answer arrives: the text so far, and a quiet line."""
    answer = f'<p class="silvia-answer">{text_html(text)}</p>'
    return view("turn silvia-live", answer + '<p class="silvia-note">Streaming…</p>')


class _Cell:
    """One live output: in a kernel a display handle updated in place, else printed text."""

    def __init__(self, per_second: float, clock: Callable[[], float], out: TextIO | None) -> None:
        self._throttle = Throttle(per_second, clock)
        self._out = out or sys.stdout
        self._pieces: list[str] = []
        self._handle: Any = None
        self._html: Any = None
        ipython = sys.modules.get("IPython") if out is None else None
        shell = ipython.get_ipython() if ipython is not None else None
        if getattr(shell, "kernel", None) is not None:
            from IPython.display import HTML, display  # type: ignore[import-not-found, unused-ignore]

            self._html, show = HTML, cast("Any", display)  # IPython's types are not checked here
            self._handle = show(self._html(streaming_html("")), display_id=True)
            self._throttle.ready()  # the empty view counts as the first update

    def piece(self, text: str) -> None:
        self._pieces.append(text)
        if self._handle is None:
            self._out.write(text)
            self._out.flush()
        elif self._throttle.ready():
            self._handle.update(self._html(streaming_html("".join(self._pieces))))

    def end(self, turn: Turn | None) -> None:
        """Show the final view (`turn`'s own), or the partial turn of a failed stream."""
        if self._handle is None:
            self._out.write("\n")
        elif turn is not None:
            self._handle.update(turn)  # its `_repr_html_`/`_repr_markdown_`: the view, sources
        else:
            self._handle.update(self._html(streaming_html("".join(self._pieces))))


def live(
    stream: ChatStream,
    *,
    per_second: float = UPDATES_PER_SECOND,
    clock: Callable[[], float] = time.monotonic,
    out: TextIO | None = None,
) -> Turn:
    """Show `stream`'s answer as it arrives, then its final view; return the `Turn`.

    In a Jupyter kernel: one output, updated in place at most `per_second` times a second, then
    the turn's view with its sources. Elsewhere, or when `out` is given: the text written to
    `out` (default stdout) as it arrives. A failed stream shows its partial turn, then raises.
    """
    cell = _Cell(per_second, clock, out)
    try:
        for text in stream.text_stream:
            cell.piece(text)
        turn = stream.until_done()
    except Exception as error:
        cell.end(getattr(error, "turn", None))
        raise
    cell.end(turn)
    return turn


async def alive(
    stream: AsyncChatStream,
    *,
    per_second: float = UPDATES_PER_SECOND,
    clock: Callable[[], float] = time.monotonic,
    out: TextIO | None = None,
) -> Turn:
    """`live` for an `AsyncChatStream`: `turn = await display.alive(stream)`."""
    cell = _Cell(per_second, clock, out)
    try:
        async for text in stream.text_stream:
            cell.piece(text)
        turn = await stream.until_done()
    except Exception as error:
        cell.end(getattr(error, "turn", None))
        raise
    cell.end(turn)
    return turn
