"""Running a QA script: each prompt observed, its session reloaded, the turn checked.

Against a base URL, or, with none, an in-process reference server. `run_script`
runs the prompts one after another; `arun_script` up to N at once on the async
client (a prompt that continues another waits for it), with the same result
whatever N. A run stops early when the server refuses the credentials or cannot be
reached before any prompt completed (`access_failure`, exit status 3); prompts that
did not run keep their place, marked `ran=False`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from ._observation import AccessFailure, Observation
from ._observing import AsyncObserver, Observer
from ._results import PromptResult, RunResult, empty_observation
from .checker import check
from .script import Prompt, Script, ScriptFormatError

__all__ = [
    "DEFAULT_TIMEOUT",
    "REFERENCE_TARGET",
    "Progress",
    "Started",
    "arun_script",
    "public_url",
    "run_script",
    "run_target",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds a prompt's stream may stay silent, and a request may take, before it counts as failed."""

REFERENCE_TARGET = "the in-process reference server"


def public_url(url: str) -> str:
    """`url` without user info, query or fragment (`https://u:k@host/?key=k` -> `https://host/`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def run_target(observer: Observer | AsyncObserver) -> str:
    """What a run against `observer` is against, as the reports say it."""
    return REFERENCE_TARGET if observer.server is not None else public_url(observer.base_url)


def check_scenarios(script: Script, observer: Observer | AsyncObserver) -> None:
    """On a reference server, raise `ScriptFormatError` for a scenario it does not have."""
    server = observer.server
    if server is None:
        return
    unknown = [
        f"{prompt.id}: {prompt.scenario!r}"
        for prompt in script.prompts
        if prompt.scenario is not None and prompt.scenario not in server.scenarios
    ]
    if unknown:
        raise ScriptFormatError(
            f"no such reference-server scenario ({'; '.join(unknown)}); "
            "`silvia serve --list` lists them"
        )


Progress = Callable[[int, int, PromptResult], None]
"""`progress(number, total, result)`: called as each prompt is done (number: how many are)."""

Started = Callable[[Prompt], None]
"""`started(prompt)`: called as a prompt is sent (for a live progress line)."""


class _Tally:
    """What a run has found so far, and whether it must stop: shared by both runners."""

    def __init__(self, script: Script, progress: Progress | None) -> None:
        self.script = script
        self.progress = progress
        self.results: list[PromptResult] = []
        self.access_failure: AccessFailure | None = None
        self._completed = False  # some prompt completed: the server works, so never stop early

    @property
    def stopped(self) -> bool:
        return self.access_failure is not None

    def add(self, prompt: Prompt, observation: Observation) -> PromptResult:
        result = PromptResult(prompt, observation, check(observation, expect=prompt.expect))
        self.results.append(result)
        self._completed = self._completed or observation.complete
        failure = observation.access_failure
        if failure is not None and not self._completed and not self.stopped:
            self.access_failure = failure
        if self.progress is not None:
            self.progress(len(self.results), len(self.script.prompts), result)
        return result

    def result(self, target: str) -> RunResult:
        return RunResult.of(self.script, target, self.results, access_failure=self.access_failure)


NO_SESSION = "the previous prompt gave no session to continue"


def _next(
    prompt: Prompt, previous: Observation | None, started: Started | None
) -> tuple[str | None, Observation | None]:
    """The session `prompt` continues (the previous prompt's, when it says `continue`),
    and its observation when it cannot be sent; else it is about to be (`started`)."""
    if not prompt.continue_session:
        session_id = None
    elif previous is None or previous.session_id is None:
        return None, empty_observation(prompt, NO_SESSION)
    else:
        session_id = previous.session_id
    if started is not None:
        started(prompt)
    return session_id, None


_O = TypeVar("_O", Observer, AsyncObserver)


def _opened(kind: type[_O], base_url: str | None, token: str | None, timeout: float) -> _O:
    """An observer of `base_url`, else of a fresh reference server."""
    if base_url is None:
        return kind.reference(token=token, timeout=timeout)
    return kind.connect(base_url, token=token, timeout=timeout)


def run_script(
    script: Script,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    observer: Observer | None = None,
    progress: Progress | None = None,
    started: Started | None = None,
) -> RunResult:
    """Run every prompt of `script`, one after another, and check it.

    The server is `observer`'s, else the one at `base_url`, else a fresh reference
    server. Raises `ScriptFormatError` before sending anything when, on a reference
    server, a prompt names a scenario it does not have.
    """
    own = observer is None
    observer = observer or _opened(Observer, base_url, token, timeout)
    try:
        check_scenarios(script, observer)
        tally = _Tally(script, progress)
        previous: Observation | None = None
        for prompt in script.prompts:
            if tally.stopped:
                break
            session_id, observation = _next(prompt, previous, started)
            if observation is None:
                observation = observer.observe(
                    prompt.message, scenario=prompt.scenario, session_id=session_id
                )
            tally.add(prompt, observation)
            previous = observation
        return tally.result(run_target(observer))
    finally:
        if own:
            observer.close()


def _chains(script: Script) -> list[list[Prompt]]:
    """The prompts in runs that must go in order: each prompt, and the ones that continue it."""
    chains: list[list[Prompt]] = []
    for prompt in script.prompts:
        if prompt.continue_session and chains:
            chains[-1].append(prompt)
        else:
            chains.append([prompt])
    return chains


async def arun_script(
    script: Script,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    observer: AsyncObserver | None = None,
    concurrency: int = 1,
    progress: Progress | None = None,
    started: Started | None = None,
) -> RunResult:
    """The async twin of `run_script`: up to `concurrency` prompts at once.

    A prompt and those that continue it run in order; when the run stops early,
    no more prompts start and those in flight are cancelled (they count as not run).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be 1 or more")
    own = observer is None
    observer = observer or _opened(AsyncObserver, base_url, token, timeout)
    try:
        check_scenarios(script, observer)
        tally = _Tally(script, progress)
        slots = asyncio.Semaphore(concurrency)
        tasks: list[asyncio.Task[None]] = []

        async def run_chain(chain: Sequence[Prompt], observer: AsyncObserver) -> None:
            previous: Observation | None = None
            for prompt in chain:
                async with slots:
                    if tally.stopped:
                        return
                    session_id, observation = _next(prompt, previous, started)
                    if observation is None:
                        observation = await observer.observe(
                            prompt.message, scenario=prompt.scenario, session_id=session_id
                        )
                tally.add(prompt, observation)
                if tally.stopped:  # stop the others: none of them can succeed either
                    for task in tasks:
                        if task is not asyncio.current_task():
                            task.cancel()
                    return
                previous = observation

        tasks += [asyncio.ensure_future(run_chain(chain, observer)) for chain in _chains(script)]
        try:
            await asyncio.wait(tasks)
        finally:  # also when this run is cancelled (Ctrl-C): nothing is left running
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
        return tally.result(run_target(observer))
    finally:
        if own:
            await observer.aclose()
