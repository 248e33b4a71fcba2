"""`FinalTargets` is in `_targets.py` now; this module goes once `sessions/_history.py`
imports it from there."""

from ._targets import FinalTargets as FinalTargets
