"""`Turn.timings`: when a turn reached its milestones, counted from the request, sync and async."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import respx

from silvia_client.chat import Timings, Turn, TurnBuilder
from silvia_client.errors import StreamDisconnectedError

from .conftest import Api
from .sse import CHAT_URL, Body, done, session, sse_response, text

pytestmark = pytest.mark.anyio

PAUSE = 0.05  # seconds the server waits before a chunk; a floor the timings must show


class PacedBody(Body):
    """`Body`, waiting `PAUSE` before each chunk whose index is in `pauses`."""

    def __init__(self, chunks: list[bytes], pauses: set[int], **kwargs: object) -> None:
        super().__init__(chunks, **kwargs)  # type: ignore[arg-type]
        self.pauses = pauses

    def __iter__(self) -> Iterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index in self.pauses:
                time.sleep(PAUSE)
            yield chunk
        if self.fail is not None:
            raise self.fail

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index in self.pauses:
                await asyncio.sleep(PAUSE)
            yield chunk
        if self.fail is not None:
            raise self.fail


def serve(server: respx.MockRouter, body: Body) -> None:
    server.post(CHAT_URL).mock(return_value=sse_response(body))


def test_each_timing_is_its_stamp_less_the_start() -> None:
    assert Turn().timings == Timings(first_byte=None, first_text=None, done=None)  # by hand
    builder = TurnBuilder()
    assert builder.timings() == Timings()  # no start: nothing to count from
    builder.started_at = 100.0
    assert builder.timings() == Timings()  # started, no milestone yet
    builder.first_byte_at = 100.25
    assert builder.timings() == Timings(first_byte=0.25)
    builder.first_text_at, builder.done_at = 101.0, 102.5
    assert builder.timings() == Timings(first_byte=0.25, first_text=1.0, done=2.5)
    assert builder.build().timings == Timings(first_byte=0.25, first_text=1.0, done=2.5)


async def test_each_milestone_is_stamped_in_order_and_shows_the_waits(
    api: Api, server: respx.MockRouter
) -> None:
    # The server pauses before the first text, before the second and before `done`: a
    # first_text moved to the second text, or a done stamped early, shows less than 2 pauses.
    serve(server, PacedBody([session("s1"), text("Hi"), text(" there"), done()], {1, 2, 3}))
    timings = (await api.turn(api.client())).timings
    assert timings.first_byte is not None
    assert timings.first_text is not None
    assert timings.done is not None
    assert 0 <= timings.first_byte <= timings.first_text <= timings.done
    assert timings.first_text - timings.first_byte >= PAUSE * 0.9
    assert timings.done - timings.first_text >= 2 * PAUSE * 0.9


async def test_a_turn_without_text_or_done_lacks_only_those(
    api: Api, server: respx.MockRouter
) -> None:
    serve(server, Body([session("s1"), done()]))
    timings = (await api.turn(api.client())).timings
    assert timings.first_text is None
    assert timings.first_byte is not None
    assert timings.done is not None
    # The partial turn of a broken stream carries its timings.
    body = Body([session("s1"), text("Hi")], fail=httpx.RemoteProtocolError("peer closed"))
    serve(server, body)
    _events, error = await api.read(api.client())
    assert isinstance(error, StreamDisconnectedError)
    timings = error.turn.timings
    assert timings.first_byte is not None
    assert timings.first_text is not None
    assert timings.done is None  # it never got there
