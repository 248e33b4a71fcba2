"""Conformance checks on what a Silvia server sends, and the scripted QA runner.

::

    from silvia_client.qa import Observer, assert_conforms, check

    with Observer.reference() as qa:            # or Observer.connect(base_url, token=...)
        observation = qa.observe("How much is in checking?", scenario="account")
    result = check(observation)                 # every rule's outcome and the findings
    assert_conforms(observation, expect={"cites_account": True, "max_turn_s": 30})
    observation.timings                         # first byte, first text, done (seconds)

`AsyncObserver` and `arun_script` are the async twins (`silvia qa run
--concurrency N`); `check_recordings` checks recorded turns with no server.

Where things are:

- `observe.py`  observing a turn as the server sent it (the public module):
                `_observing.py` one turn through a client, and the observers;
                `_observation.py` what an observation is, its timings, and
                when a server cannot be used at all (`AccessFailure`)
- `rules.py`    the rule table and the readings taken where the doc leaves room;
                `_rule.py` what a rule reads (`Facts`), a rule and a finding;
                `_checks.py` each rule's check
- `checker.py`  running the rules over an observation; `assert_conforms`
- `script.py`   the QA script format (JSON, read through pydantic); `starter.json`
- `runner.py`   running a script, and what a run found
- `recorded.py` checking recorded turns (`testing.Recording`), no server needed
- `_privacy.py` what a finding may show: no provider, no vendor name
- `report.py`   the terminal table, JUnit XML, JSON; `_html.py` the HTML page (`report.css`)
- `pytest_plugin.py`  the `--silvia-base-url` option and the `silvia_qa` fixture

`silvia qa run SCRIPT`, `silvia qa check FILE...`, `silvia qa rules` and
`silvia qa init [PATH]` are the command line.
"""

from typing import TYPE_CHECKING

from .._lazy import load_on_first_use

if TYPE_CHECKING:
    from ._observation import AccessFailure, Observation, Reload, SentEvent, observation_from_turn
    from ._observing import (
        AsyncObserver,
        Observer,
        aobserve,
        areload_session,
        observe,
        reload_session,
    )
    from ._rule import Finding, Rule, Severity
    from .checker import CheckResult, RuleOutcome, Status, assert_conforms, check
    from .recorded import RecordingSource, check_recordings, observe_recording
    from .rules import EXPECTATIONS, RULES, RULES_BY_ID, TIMING
    from .runner import PromptResult, RunResult, arun_script, run_script
    from .script import Expectations, Prompt, Script, ScriptFormatError, load_script, parse_script

__all__ = [
    "EXPECTATIONS",
    "RULES",
    "RULES_BY_ID",
    "TIMING",
    "AccessFailure",
    "AsyncObserver",
    "CheckResult",
    "Expectations",
    "Finding",
    "Observation",
    "Observer",
    "Prompt",
    "PromptResult",
    "RecordingSource",
    "Reload",
    "Rule",
    "RuleOutcome",
    "RunResult",
    "Script",
    "ScriptFormatError",
    "SentEvent",
    "Severity",
    "Status",
    "aobserve",
    "areload_session",
    "arun_script",
    "assert_conforms",
    "check",
    "check_recordings",
    "load_script",
    "observation_from_turn",
    "observe",
    "observe_recording",
    "parse_script",
    "reload_session",
    "run_script",
]

# Each name is imported on first use (`_lazy.py` says why).
load_on_first_use(
    __name__,
    {
        ".checker": ("CheckResult", "RuleOutcome", "Status", "assert_conforms", "check"),
        "._observation": (
            "AccessFailure",
            "Observation",
            "Reload",
            "SentEvent",
            "observation_from_turn",
        ),
        "._observing": (
            "AsyncObserver",
            "Observer",
            "aobserve",
            "areload_session",
            "observe",
            "reload_session",
        ),
        "._rule": ("Finding", "Rule", "Severity"),
        ".rules": ("EXPECTATIONS", "RULES", "RULES_BY_ID", "TIMING"),
        ".recorded": ("RecordingSource", "check_recordings", "observe_recording"),
        ".runner": ("PromptResult", "RunResult", "arun_script", "run_script"),
        ".script": (
            "Expectations",
            "Prompt",
            "Script",
            "ScriptFormatError",
            "load_script",
            "parse_script",
        ),
    },
)
