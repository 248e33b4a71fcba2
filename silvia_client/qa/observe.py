"""Observing a turn as the server sent it: each SSE event raw, beside the SDK's reading of it.

The public names of observing, in one module (`silvia_client.qa` has them too):
`observe`, `reload_session` and `Observer`, with their async twins `aobserve`,
`areload_session` and `AsyncObserver`; and what they make, an `Observation` of
`SentEvent`s and a `Reload` (`observation_from_turn` rebuilds one from a
`Turn`; `NOT_JSON` is the value of an event whose data is not JSON).

The code is in `_observing.py` (observing, the observers) and `_observation.py`
(what an observation is).
"""

from __future__ import annotations

from ._observation import NOT_JSON, Observation, Reload, SentEvent, observation_from_turn
from ._observing import AsyncObserver, Observer, aobserve, areload_session, observe, reload_session

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
