"""Observing a turn as the server sent it: the public module of `observe`, `Observer` and kin.

The code is in `_observing.py` (observing, the observers) and `_observation.py` (what an
observation is; `NOT_JSON` is the value of an event whose data is not JSON).
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
