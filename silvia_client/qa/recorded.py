"""Checking recorded turns: every rule over a `Recording`, with no server at all.

`observe_recording` replays the turn byte for byte (`Recording.transport()`) through
the SDK's client, on a clock that reads each chunk's recorded arrival, so the rules
and the timings are those of the recorded turn. `check_recordings` does so for each
recording and returns a `RunResult`, so `silvia qa check` reports like `silvia qa run`;
a recorded header HTTP cannot carry adds the `recorded-headers` rule. The client is
addressed at the testing kit's `IN_PROCESS_URL`: no request leaves the process.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Union

import httpx

from .. import DEFAULT_WIRE
from ._rule import Problem, Rule
from .rules import RULES
from .runner import PromptResult, RunResult
from .script import Prompt, Script

if TYPE_CHECKING:
    from ..testing import Recording
    from ._observation import Observation

__all__ = [
    "RECORDED_HEADERS",
    "RecordingSource",
    "check_recordings",
    "observe_recording",
    "recorded_prompt",
]

_NOT_ID = re.compile(r"[^A-Za-z0-9_.-]+")


RECORDED_HEADERS = Rule(
    "recorded-headers",
    "error",
    "every recorded header is one HTTP can carry: a token name, a visible-ASCII value "
    "(a replay server refuses any other)",
    lambda facts: (),  # each recording's own problems, given by `_finding`
)
"""Not a server rule: the row `check_recordings` adds when a recording holds such a header."""


def _id(name: str, taken: set[str]) -> str:
    """A prompt id from a recording's name: the script's id alphabet, unique in the run."""
    base = _NOT_ID.sub("-", name).strip("-._")[:60] or "recording"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}-{number}"
    taken.add(candidate)
    return candidate


def _body_field(recording: Recording, name: str) -> str | None:
    body = recording.request.body
    value = body.get(name) if isinstance(body, dict) else None
    return value if isinstance(value, str) else None


def recorded_prompt(recording: Recording, prompt_id: str) -> Prompt:
    """The prompt a recording answered: its message, as the recorded request sent it."""
    return Prompt(id=prompt_id, message=_body_field(recording, DEFAULT_WIRE.message_field) or "")


class _RecordedClock:
    """A clock that reads the recorded arrival time of the bytes read last."""

    def __init__(self, recording: Recording) -> None:
        self.ends = list(accumulate(len(chunk.data) for chunk in recording.response.chunks))
        self.times = [chunk.at for chunk in recording.response.chunks]
        self.read = 0
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, data: bytes) -> None:
        self.read += len(data)
        index = bisect_left(self.ends, self.read)
        if index < len(self.times):
            self.now = self.times[index]


class _ClockedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, clock: _RecordedClock) -> None:
        self._inner = inner
        self._clock = clock

    def __iter__(self) -> Iterator[bytes]:
        for data in self._inner:
            self._clock.advance(data)
            yield data

    def close(self) -> None:
        self._inner.close()


class _ClockedReplay(httpx.BaseTransport):
    """The recording's replay, moving `clock` to each chunk's recorded time as it is read."""

    def __init__(self, recording: Recording, clock: _RecordedClock) -> None:
        self._inner = recording.transport()
        self._clock = clock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        if request.method != "POST":
            return response
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers.raw,
            stream=_ClockedStream(response.stream, self._clock),
            extensions=response.extensions,
        )


def observe_recording(recording: Recording) -> Observation:
    """What the server sent in `recording`, observed as live, timed by the recording."""
    from .. import SilviaClient
    from ..testing import IN_PROCESS_URL
    from ._observing import observe

    session_id = _body_field(recording, DEFAULT_WIRE.session_id_field)
    message = _body_field(recording, DEFAULT_WIRE.message_field) or ""
    clock = _RecordedClock(recording)
    with (
        httpx.Client(transport=_ClockedReplay(recording, clock)) as http,
        # The replay answers whatever the host; this one is the in-process URL,
        # which no request leaves, so the client has no plain-http token to warn of.
        SilviaClient(
            base_url=IN_PROCESS_URL, token="replay", max_retries=0, http_client=http
        ) as client,
    ):
        return observe(client, message or "(recorded)", session_id=session_id, clock=clock)


RecordingSource = Union["Recording", str, "os.PathLike[str]", tuple[str, "Recording"]]
"""One item `check_recordings` takes: a recording, a path to its file, or a named one."""

_TAKES = (
    "check_recordings takes recordings, paths to recording files (str or os.PathLike), "
    "(name, Recording) pairs or mappings of names to recordings, alone or mixed in an "
    "iterable"
)


def check_recordings(
    recordings: Mapping[str, Recording]
    | Iterable[RecordingSource | Mapping[str, Recording]]
    | RecordingSource,
    *,
    target: str | None = None,
) -> RunResult:
    """Every rule over each recorded turn, as a run with one prompt per recording.

    `recordings`: a `Recording`, a path to its file, a `(name, Recording)` pair or a
    mapping of names to recordings, or any mix of them in an iterable (any other shape
    is a `TypeError`, raised before any file is read). A prompt's id is the pair's or
    mapping's name, a path's stem, else the recorded request id, else `recording-N`;
    kept to the script's id alphabet, and made unique (`x`, `x-2`, ...).
    """
    from .checker import check

    named = _named(recordings)
    taken: set[str] = set()
    results = []
    # A problem per header HTTP cannot carry (its message names the line).
    found = [
        tuple(Problem(str(error), {"line": error.line}) for error in recording.header_errors())
        for _, recording in named
    ]
    judged = any(found)  # then every recording gets the row, to pass or fail
    for (name, recording), problems in zip(named, found, strict=True):
        prompt = recorded_prompt(recording, _id(name, taken))
        observation = observe_recording(recording)
        rules = (*RULES, _finding(problems)) if judged else RULES
        results.append(PromptResult(prompt, observation, check(observation, rules=rules)))
    script = Script(tuple(result.prompt for result in results), name="recorded turns")
    where = target or f"{len(results)} recording(s), no server"
    rules = (*RULES, RECORDED_HEADERS) if judged else RULES
    return RunResult.of(script, where, results, rules=rules)


def _named(recordings: object) -> list[tuple[str, Recording]]:
    """`check_recordings`' argument as (name, recording) pairs, in order.

    Every item's shape is checked before any path is read.
    """
    from ..testing import Recording

    if isinstance(recordings, (Recording, str, os.PathLike, Mapping)) or _is_pair(recordings):
        items: Iterable[object] = [recordings]
    elif isinstance(recordings, Iterable) and not isinstance(recordings, (bytes, bytearray)):
        items = recordings
    else:
        raise TypeError(f"{_TAKES}; got {type(recordings).__name__}")
    # A (name, recording) pair, or a path to read once every item's shape is known.
    entries: list[tuple[str, Recording] | str | os.PathLike[str]] = []
    for place, item in enumerate(items, start=1):
        if isinstance(item, Mapping):
            entries.extend(_pair(pair, f"{place} (a mapping)") for pair in item.items())
        elif isinstance(item, Recording):  # named by the request id its response carried
            header = DEFAULT_WIRE.request_id_header
            ids = [value.strip() for name, value in item.response.headers if name == header]
            entries.append((next((i for i in ids if i), f"recording-{len(entries) + 1}"), item))
        elif isinstance(item, (str, os.PathLike)) and isinstance(os.fspath(item), str):
            entries.append(item)
        else:
            entries.append(_pair(item, str(place)))
    return [
        entry if isinstance(entry, tuple) else (Path(entry).stem, Recording.load(entry))
        for entry in entries
    ]


def _is_pair(item: object) -> bool:
    """Whether `item` is one (name, Recording) pair (else a tuple is an iterable of items)."""
    from ..testing import Recording

    return (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], Recording)
    )


def _pair(item: object, place: str) -> tuple[str, Recording]:
    from ..testing import Recording

    if isinstance(item, (tuple, list)) and len(item) == 2:
        name, recording = item
        if isinstance(name, str) and isinstance(recording, Recording):
            return name, recording
        what = f"a pair of {type(name).__name__} and {type(recording).__name__}"
    else:
        what = type(item).__name__  # never the item itself: it may hold anything
    raise TypeError(f"{_TAKES}; got {what} (item {place})")


def _finding(problems: tuple[Problem, ...]) -> Rule:
    """`RECORDED_HEADERS`, finding `problems` (one recording's)."""
    return replace(RECORDED_HEADERS, check=lambda facts: problems)
