"""The starter script `silvia qa init` writes: every expectation, the budgets, a continuation.

Built here, in code, so it ships in every wheel (no data file to find) and
cannot drift from the format: `tests/qa/test_init.py` loads it with
`load_script` and runs it against the embedded reference server, where every
prompt passes. Each object carries a `"comment"`, the key every object of a
script may carry and the loader ignores, saying what it is for.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["starter_script", "starter_text"]


def starter_script() -> dict[str, Any]:
    """The starter script, as its JSON value."""
    return {
        "comment": (
            "A starter QA script: `silvia qa run` this file against the embedded reference "
            "server (no --base-url), then against staging (--base-url URL, SILVIA_TOKEN set). "
            "`scenario` picks the reference server's turn; a real server ignores it. "
            "Any object may carry a `comment`; the loader ignores it."
        ),
        "name": "Starter: citation targets",
        "timing": {
            "comment": "Budgets for every prompt; `severity` warning (default) or error.",
            "max_first_text_s": 10,
            "max_turn_s": 60,
            "severity": "warning",
        },
        "prompts": [
            {
                "comment": "A turn that completes and cites an account and two kinds of data.",
                "id": "overview",
                "message": "How are my checking account and credit cards doing, and how is "
                "Apple trading?",
                "scenario": "demo",
                "expect": {
                    "complete": True,
                    "cites_account": True,
                    "cites_kinds": ["market_data", "tax_reference"],
                },
            },
            {
                "comment": "`continue` sends this in the previous prompt's session.",
                "id": "follow-up",
                "message": "And what do high-yield savings accounts pay right now?",
                "scenario": "search-web",
                "continue": True,
                "expect": {"cites_kinds": ["web"]},
            },
            {
                "comment": "A prompt's own budgets replace the script's `timing` for it.",
                "id": "portfolio",
                "message": "What is my portfolio worth today?",
                "scenario": "portfolio",
                "expect": {"cites_kinds": ["portfolio"], "max_first_text_s": 5, "max_turn_s": 30},
            },
            {
                "comment": "`cites_account: false`: no citation may target an account.",
                "id": "quotes",
                "message": "How are Apple and Microsoft trading?",
                "scenario": "market-data",
                "expect": {"cites_account": False, "cites_kinds": ["market_data"]},
            },
            {
                "comment": (
                    "`no_old_checkpoint`: this turn cannot resume a checkpoint written before "
                    "targets existed, so a source typed late is an error, not a warning."
                ),
                "id": "resumed",
                "message": "Carry on from where you left off.",
                "scenario": "checkpoint-current",
                "expect": {"complete": True, "no_old_checkpoint": True},
            },
            {
                "comment": "`no_citations`: a greeting cites nothing.",
                "id": "hello",
                "message": "Hello!",
                "scenario": "no-citations",
                "expect": {"complete": True, "no_citations": True},
            },
        ],
    }


def starter_text() -> str:
    """The starter script as the file `silvia qa init` writes."""
    return json.dumps(starter_script(), indent=2, ensure_ascii=False) + "\n"
