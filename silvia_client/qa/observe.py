"""Observing a turn as the server sent it: each SSE event raw, beside the SDK's reading of it.

The public names of observing, in one module (`silvia_client.qa` has them too):
`observe`, `reload_session` and `Observer`, with their async twins `aobserve`,
`areload_session` and `AsyncObserver`; and what they make, an `Observation` of
`SentEvent`s and a `Reload` (`observation_from_turn` rebuilds one from a
`Turn`; `NOT_JSON` is the value of an event whose data is not JSON).

Where things are:

- `_observe_turn.py`  one turn through a client, raw and typed in one pass, and the
                      session reloaded (`observe`, `reload_session`; async twins)
- `_observer.py`      `Observer` / `AsyncObserver`: a client on a reference server or
                      a base URL, recording when asked
- `_observation.py`   what an observation is, and the failures it records
- `_timing.py`        first byte, first text, done
"""

from __future__ import annotations

from ._observation import NOT_JSON, Observation, Reload, SentEvent, observation_from_turn
from ._observe_turn import aobserve, areload_session, observe, reload_session
from ._observer import AsyncObserver, Observer

__all__ = [
    "NOT_JSON",
    "AsyncObserver",
    "Observation",
    "Observer",
    "Reload",
    "SentEvent",
    "aobserve",
    "areload_session",
    "observation_from_turn",
    "observe",
    "reload_session",
]
