"""Tracing off, the default: nothing of OpenTelemetry, nor the SDK's tracing, is imported.

In a fresh interpreter (this one may have imported it for `test_tracing.py`):
`import silvia_client`, then a sync and an async turn and a session GET on the
reference server, with no `tracer_provider`, whether or not OpenTelemetry is installed.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import asyncio, sys
import silvia_client
from silvia_client.testing import ReferenceServer

def loaded():
    traced = ("opentelemetry", "silvia_client._tracing")
    return sorted(m for m in sys.modules if m.split(".")[0] in traced or m in traced)

print(loaded())
server = ReferenceServer()
with server.client() as client:
    turn = client.chat.send("How much is in checking?")
    client.sessions.get(turn.session_id)
    copy = client.with_options(timeout=30)
    copy.chat.send("And savings?", session_id=turn.session_id)

async def main():
    async with server.async_client() as client:
        with_stream = client.chat.stream("How much is in checking?")
        async with with_stream as stream:
            turn = await stream.until_done()
        await client.sessions.get(turn.session_id)

asyncio.run(main())
print(turn.complete, loaded())
"""


def test_a_client_without_a_tracer_provider_imports_nothing_of_opentelemetry() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.splitlines() == ["[]", "True []"]
