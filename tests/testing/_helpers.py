"""Small helpers shared by the reference server's tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

from silvia_client.testing import SCENARIO_HEADER

from ..sse_helpers import iter_sse

AUTH = {"authorization": "Bearer test-token"}
VENDOR_NAMES = ("plaid", "snaptrade", "manual")


def sse_events(chunks: Iterable[bytes]) -> list[tuple[str, Any]]:
    """(event name, decoded JSON data) for every event of a body."""
    return [(event.event, json.loads(event.data)) for event in iter_sse(chunks)]


def without_providers(value: object) -> object:
    """`value` with every target's `provider` removed, the only place a vendor may appear."""
    if isinstance(value, dict):
        return {k: without_providers(v) for k, v in value.items() if k != "provider"}
    if isinstance(value, list):
        return [without_providers(item) for item in value]
    return value


def walk_dicts(value: object) -> Iterator[dict[str, object]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk_dicts(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_dicts(item)


def read_turn(client: httpx.Client, scenario: str, into: list[bytes]) -> None:
    """Play `scenario` and read its body into `into`, chunk by chunk (errors propagate)."""
    headers = {SCENARIO_HEADER: scenario}
    with client.stream("POST", "/api/claude", json={"message": "hi"}, headers=headers) as response:
        into.extend(response.iter_bytes())


async def aread_turn(client: httpx.AsyncClient, scenario: str, into: list[bytes]) -> None:
    """Async twin of `read_turn`."""
    headers = {SCENARIO_HEADER: scenario}
    async with client.stream(
        "POST", "/api/claude", json={"message": "hi"}, headers=headers
    ) as response:
        into.extend([chunk async for chunk in response.aiter_bytes()])
