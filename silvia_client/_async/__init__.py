"""The I/O, written once, async: `_client.py` (sending), `_stream.py` (`client.chat`),
`_sessions.py` (`client.sessions`), `_body.py` (a body read in bounded, guarded pieces)
and, by hand, `_backend.py`. `tools/unasync.py` generates `_sync/` from the others.
"""
