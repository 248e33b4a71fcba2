"""Streaming with `AsyncSilviaClient`: the same events, with `async with` and `async for`.

Two turns run at once here, to show that a stream is just a coroutine's work:
one read event by event, one through `text_stream`.
"""

from __future__ import annotations

import asyncio
import os

from silvia_client import AsyncSilviaClient, Turn
from silvia_client.chat import CitationEvent, TextEvent
from silvia_client.testing import ReferenceServer


async def by_events(silvia: AsyncSilviaClient, question: str) -> tuple[str, Turn]:
    shown: list[str] = []
    numbers: dict[str, int] = {}
    async with silvia.chat.stream(question) as stream:
        async for event in stream:
            if isinstance(event, TextEvent):
                shown.append(event.text)
            elif isinstance(event, CitationEvent):
                number = numbers.setdefault(event.citation.source, len(numbers) + 1)
                shown.append(f"[{number}]")
        return "".join(shown), await stream.until_done()


async def by_text(silvia: AsyncSilviaClient, question: str) -> tuple[str, Turn]:
    async with silvia.chat.stream(question) as stream:
        text = "".join([piece async for piece in stream.text_stream])
        return text, await stream.until_done()


async def main() -> None:
    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    real_server = bool(os.environ.get("SILVIA_BASE_URL"))
    silvia = AsyncSilviaClient() if real_server else ReferenceServer().async_client()
    async with silvia:
        (marked, first), (plain, second) = await asyncio.gather(
            by_events(silvia, "How much is in checking?"),
            by_text(silvia, "What should I know about Apple?"),
        )
    print("With markers:", marked)
    print("Text only:   ", plain)
    print(f"Two sessions: {first.session_id != second.session_id}")
    print(f"Both complete: {first.complete and second.complete}")


if __name__ == "__main__":
    asyncio.run(main())
