"""Running a QA script: each prompt observed, its session reloaded, the turn checked.

Against a base URL (staging), or, with none, against an in-process reference
server, so a script can be tried on a fresh machine. A prompt's `scenario` is
sent as the reference server's `x-silvia-scenario` header either way (a real
server ignores it), so one script drives both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..chat import TurnBuilder
from .checker import CheckResult, check
from .observe import Observation, Observer
from .rules import RULES, Finding, Rule
from .script import Prompt, Script, ScriptFormatError

__all__ = ["DEFAULT_TIMEOUT", "PromptResult", "RunResult", "public_url", "run_script"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a prompt's stream may stay silent, and a request may take, before it counts as failed."""

REFERENCE_TARGET = "the in-process reference server"


@dataclass(frozen=True)
class PromptResult:
    """One prompt: what was observed and how it was judged."""

    prompt: Prompt
    observation: Observation
    result: CheckResult


@dataclass(frozen=True)
class RunResult:
    """A whole run: the script, where it ran, and every prompt's result."""

    script: Script
    target: str  # the base URL (no user info), or REFERENCE_TARGET
    prompts: tuple[PromptResult, ...]
    rules: tuple[Rule, ...] = RULES

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(finding for result in self.prompts for finding in result.result.findings)

    @property
    def errors(self) -> int:
        return sum(finding.severity == "error" for finding in self.findings)

    @property
    def warnings(self) -> int:
        return sum(finding.severity == "warning" for finding in self.findings)

    @property
    def ok(self) -> bool:
        """No finding of error severity."""
        return self.errors == 0


def public_url(url: str) -> str:
    """`url` without user info, query or fragment (`https://u:secret@host/?key=k` -> `https://host/`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def _skipped(prompt: Prompt, reason: str) -> Observation:
    return Observation(prompt.message, (), TurnBuilder().build(), failure=reason)


def run_script(
    script: Script,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    observer: Observer | None = None,
    progress: Callable[[int, int, PromptResult], None] | None = None,
) -> RunResult:
    """Run every prompt of `script` and check it.

    The server is `observer`'s if given, else the one at `base_url` (with
    `token`, else `SILVIA_TOKEN`), else a fresh in-process reference server.
    `progress(number, total, result)` is called after each prompt. Raises
    `ScriptFormatError` before sending anything if, on a reference server, a
    prompt names a scenario the server does not have.
    """
    own = observer is None
    if observer is None:
        if base_url is None:
            observer = Observer.reference(token=token, timeout=timeout)
        else:
            observer = Observer.connect(base_url, token=token, timeout=timeout)
    try:
        server = observer.server
        if server is not None:
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
        target = REFERENCE_TARGET if server is not None else public_url(observer.base_url)
        results: list[PromptResult] = []
        previous: Observation | None = None
        for number, prompt in enumerate(script.prompts, start=1):
            session_id = None
            if prompt.continue_session:
                session_id = previous.session_id if previous is not None else None
            if prompt.continue_session and session_id is None:
                observation = _skipped(prompt, "the previous prompt gave no session to continue")
            else:
                observation = observer.observe(
                    prompt.message, scenario=prompt.scenario, session_id=session_id
                )
            result = PromptResult(prompt, observation, check(observation, expect=prompt.expect))
            results.append(result)
            previous = observation
            if progress is not None:
                progress(number, len(script.prompts), result)
        return RunResult(script, target, tuple(results))
    finally:
        if own:
            observer.close()
