"""The I/O, written once, async: the client, the chat stream, the resources, body reading.

- `_client.py`   `AsyncSilviaClient`: sending, with retries, within a call's deadline
- `_stream.py`   `client.chat` (`AsyncChat.stream`, `.send`) and `AsyncChatStream`: the one
  reading loop of a chat turn
- `_sessions.py` `client.sessions`: `AsyncSessions.get` and `.get_raw`
- `_body.py`     a body read in bounded, guarded pieces; the drain after `done`
- `_backend.py`  what the async side does its own way (anyio), by hand

`tools/unasync.py` generates `silvia_client/_sync/` from every module here but
`_backend.py`; what the two sides share without I/O is below them (`_base.py`, ...).
"""
