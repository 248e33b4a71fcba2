"""`display.live(stream)` and `alive`: one output updated in place in a kernel, text elsewhere."""

from __future__ import annotations

import asyncio
import io
import itertools
import math
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from silvia_client import ConfigurationError, StreamError, display
from silvia_client.display._live import Throttle, streaming_html
from silvia_client.testing import SCENARIO_HEADER, ReferenceServer


def ticking(step: float) -> Callable[[], float]:
    """A fake clock `step` seconds further on at each reading."""
    return itertools.count(step, step).__next__


def test_the_throttle_lets_at_most_ten_updates_a_second_through() -> None:
    throttle = Throttle(clock=ticking(0.001))  # a call every millisecond, for three seconds
    times = [(n + 1) / 1000 for n in range(3000) if throttle.ready()]
    assert times[0] == pytest.approx(0.001)  # the first goes at once
    for start in range(3):
        assert 9 <= sum(start <= t < start + 1 for t in times) <= 10
    assert Throttle(per_second=2).interval == 0.5
    for bad in (0, -1.0, math.nan):
        with pytest.raises(ConfigurationError, match="positive"):
            Throttle(per_second=bad)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A fake Jupyter kernel's outputs: each `display` and each update of its handle, in order."""
    shown: list[Any] = []

    def show(obj: object, *, display_id: bool) -> types.SimpleNamespace:
        assert display_id is True
        shown.append(("display", obj))
        return types.SimpleNamespace(update=lambda obj: shown.append(("update", obj)))

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())  # type: ignore[attr-defined]
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = show  # type: ignore[attr-defined]
    ipython_display.HTML = lambda data: types.SimpleNamespace(data=data)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    return shown


def test_in_a_kernel_one_output_is_updated_in_place_then_shows_the_turn(kernel: list[Any]) -> None:
    with ReferenceServer().client() as client:
        with client.chat.stream("Hi") as stream:
            turn = display.live(stream, clock=ticking(0.05))  # two pieces per allowed update
        (call, first), *streaming, final = kernel
        assert call == "display"
        assert "Streaming…" in first.data
        assert 'class="silvia-answer"></p>' in first.data
        assert final == ("update", turn)  # its own view, with the sources
        assert streaming, "the text was shown as it arrived"
        assert all(c == "update" and "Streaming…" in u.data for c, u in streaming)
        assert len(streaming) <= len([t for t in turn.text.split(" ") if t])  # a word a piece
        kernel.clear()
        with client.chat.stream("Hi") as stream:
            display.live(stream, clock=lambda: 0.0)  # the whole answer within one instant
        assert len(kernel) == 2  # a fast stream: only the first view and the final one
    kernel.clear()
    headers = {SCENARIO_HEADER: "fault-drop"}
    client = ReferenceServer().client(max_retries=0)
    with (
        client,
        pytest.raises(StreamError) as caught,
        client.chat.stream("Hi", extra_headers=headers) as stream,
    ):
        display.live(stream)
    assert kernel[-1] == ("update", caught.value.turn)  # the partial turn, then the error
    kernel.clear()

    async def main() -> Any:  # the async twin
        client = ReferenceServer().async_client()
        async with client, client.chat.stream("Hi") as stream:
            return await display.alive(stream, clock=ticking(1.0))

    turn = asyncio.run(main())
    assert [call for call, _ in kernel] == ["display"] + ["update"] * (len(kernel) - 1)
    assert kernel[-1] == ("update", turn)
    assert len(kernel) > 2


def test_outside_a_kernel_the_text_is_printed_as_it_arrives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ReferenceServer().client() as client:
        with client.chat.stream("Hi") as stream:
            turn = display.live(stream)
        assert capsys.readouterr().out == turn.text + "\n"
        out = io.StringIO()
        with client.chat.stream("Hi") as stream:
            again = display.live(stream, out=out)
    assert out.getvalue() == again.text + "\n"
    assert again.complete  # `alive` shares the output with `live`: its own loop is tested above


def test_the_streaming_view_escapes_what_it_shows() -> None:
    shown = streaming_html("<script>x</script>\u202e")
    assert "<script>x" not in shown
    assert "&lt;script&gt;x&lt;/script&gt;" in shown
    assert "\u202e" not in shown
