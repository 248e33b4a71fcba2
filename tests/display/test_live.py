"""`display.live(stream)` and `alive`: one output updated in place in a kernel, text elsewhere."""

from __future__ import annotations

import asyncio
import io
import math
import sys
import types
from typing import Any

import pytest

from silvia_client import ConfigurationError, StreamError, display
from silvia_client.display._live import Throttle, streaming_html
from silvia_client.testing import SCENARIO_HEADER, ReferenceServer


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_throttle_lets_at_most_ten_updates_a_second_through() -> None:
    clock = FakeClock(0.001)  # a call every millisecond, for three seconds
    throttle = Throttle(clock=clock)
    times = [clock.now for _ in range(3000) if throttle.ready()]
    assert times[0] == pytest.approx(0.001)  # the first goes at once
    for start in range(3):
        assert 9 <= sum(start <= t < start + 1 for t in times) <= 10
    assert Throttle(per_second=2, clock=FakeClock(0.1)).interval == 0.5
    for bad in (0, -1.0, math.nan):
        with pytest.raises(ConfigurationError, match="positive"):
            Throttle(per_second=bad)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A fake Jupyter kernel: `IPython.get_ipython().kernel`, and a `display` that records."""
    shown: list[Any] = []
    displays: list[dict[str, Any]] = []

    def show(obj: object, *, display_id: bool) -> types.SimpleNamespace:
        displays.append({"obj": obj, "display_id": display_id})
        shown.append(obj)
        return types.SimpleNamespace(update=shown.append)  # the display handle

    class HTML:
        def __init__(self, data: str) -> None:
            self.data = data

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())  # type: ignore[attr-defined]
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = show  # type: ignore[attr-defined]
    ipython_display.HTML = HTML  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    shown.append(displays)  # shown[0]: the display calls
    return shown


def test_in_a_kernel_one_output_is_updated_in_place_then_shows_the_turn(kernel: list[Any]) -> None:
    displays = kernel.pop(0)
    with ReferenceServer().client() as client:
        with client.chat.stream("Hi") as stream:
            turn = display.live(stream, clock=FakeClock(0.05))  # two pieces per allowed update
        assert len(displays) == 1
        assert displays[0]["display_id"] is True
        first, *streaming, final = kernel
        assert "Streaming…" in first.data
        assert 'class="silvia-answer"></p>' in first.data
        assert final is turn  # its own view, with the sources
        assert streaming, "the text was shown as it arrived"
        assert all("Streaming…" in update.data for update in streaming)
        pieces = len([t for t in turn.text.split(" ") if t])  # the server streams words
        assert len(streaming) <= pieces
        kernel.clear()
        with client.chat.stream("Hi") as stream:
            display.live(stream, clock=lambda: 0.0)  # the whole answer within one instant
    _, *streaming, _ = kernel
    assert streaming == []  # a fast stream: only the first view and the final one


def test_a_failed_stream_shows_its_partial_turn_then_raises(kernel: list[Any]) -> None:
    kernel.pop(0)
    headers = {SCENARIO_HEADER: "fault-drop"}
    client = ReferenceServer().client(max_retries=0)
    with (
        client,
        pytest.raises(StreamError) as caught,
        client.chat.stream("Hi", extra_headers=headers) as stream,
    ):
        display.live(stream)
    assert kernel[-1] is caught.value.turn


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
    assert again.complete

    async def main() -> Any:  # the async twin
        client = ReferenceServer().async_client()
        async with client, client.chat.stream("Hi") as stream:
            return await display.alive(stream)

    turn = asyncio.run(main())
    assert turn.complete
    assert capsys.readouterr().out == turn.text + "\n"


def test_the_async_twin_updates_one_output_in_a_kernel(kernel: list[Any]) -> None:
    displays = kernel.pop(0)

    async def main() -> Any:
        client = ReferenceServer().async_client()
        async with client, client.chat.stream("Hi") as stream:
            return await display.alive(stream, clock=FakeClock(1.0))

    turn = asyncio.run(main())
    assert len(displays) == 1
    assert kernel[-1] is turn
    assert len(kernel) > 2


def test_the_streaming_view_escapes_what_it_shows() -> None:
    shown = streaming_html("<script>x</script>\u202e")
    assert "<script>x" not in shown
    assert "&lt;script&gt;x&lt;/script&gt;" in shown
    assert "\u202e" not in shown
