"""The quick paths of the hot loops give exactly what the plain paths give.

Each optimisation made for the benchmarks (benchmarks/) has a plain
counterpart that defines its behaviour: `json.loads`, `model_validate`, the
event-stream algorithm as the spec words it, the readers of `EventDecoder`.
These tests hold the quick path to it on arbitrary input, so a behaviour
change cannot hide in a fast path. What they draw from is `references.py`.
"""
