"""A FastAPI backend in front of Silvia: it streams a turn's text, and returns turns as JSON.

    pip install silvia-client fastapi uvicorn
    uvicorn relay_fastapi:app     # from this folder; or: python relay_fastapi.py

Your browser talks to this app, and this app to Silvia with `AsyncSilviaClient`
(the server at SILVIA_BASE_URL, token SILVIA_TOKEN; without SILVIA_BASE_URL, the
embedded reference server). Its routes:

- `POST /chat/stream` `{"message": ...}`: the answer's text as it streams
  (`text/plain`); a browser that goes away closes the turn's stream to Silvia too;
- `POST /chat/events`: every event of the turn as it streams, one JSON object a
  line (`event.to_json()`: a `type` key, citations in their wire form);
- `POST /chat`: the finished `Turn` as JSON (`-> Turn`: what `turn.to_json()` writes);
- `GET /sessions/{session_id}`: the `Session` as JSON;
- `GET /sessions/{session_id}/citations`: every summary row of the session
  (`response_model=list[Citation]`).

pydantic dumps a `Turn`, a `Session` and a `Citation`, and `event.to_json()` writes
an event, without any `provider`, so
none of these responses names the vendor that holds an account (FastAPI 0.128 or
later: earlier ones copy a dataclass into a dict before they check it).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from silvia_client import AsyncSilviaClient, Turn
from silvia_client.citations import Citation
from silvia_client.sessions import Session
from silvia_client.testing import ReferenceServer

# The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
real_server = bool(os.environ.get("SILVIA_BASE_URL"))
silvia = AsyncSilviaClient() if real_server else ReferenceServer().async_client()


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
    async with silvia:  # one client, and its connections, for the app's lifetime
        yield


app = FastAPI(lifespan=lifespan)


class Ask(BaseModel):
    message: str
    session_id: str | None = None


async def answer(ask: Ask) -> AsyncIterator[str]:
    # Leaving the `async with` (the turn ends, or the browser left and the task is
    # cancelled) closes the turn's stream to Silvia.
    async with silvia.chat.stream(ask.message, session_id=ask.session_id) as stream:
        async for text in stream.text_stream:
            yield text


@app.post("/chat/stream")
async def chat_stream(ask: Ask) -> StreamingResponse:
    return StreamingResponse(answer(ask), media_type="text/plain; charset=utf-8")


async def events(ask: Ask) -> AsyncIterator[str]:
    async with silvia.chat.stream(ask.message, session_id=ask.session_id) as stream:
        async for event in stream:
            yield event.to_json() + "\n"


@app.post("/chat/events")
async def chat_events(ask: Ask) -> StreamingResponse:
    return StreamingResponse(events(ask), media_type="application/x-ndjson")


@app.post("/chat")
async def chat(ask: Ask) -> Turn:
    return await silvia.chat.send(ask.message, session_id=ask.session_id)


@app.get("/sessions/{session_id}")
async def session(session_id: str) -> Session:
    return await silvia.sessions.get(session_id)


@app.get("/sessions/{session_id}/citations", response_model=list[Citation])
async def session_citations(session_id: str) -> list[Citation]:
    history = await silvia.sessions.get(session_id)
    return [row for message in history.messages for row in message.citations]


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=8000)
