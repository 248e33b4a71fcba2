"""What the QA tests share: observations built by hand, event by event, `assert_private`, and
`silvia qa` in-process (`run_cli`, the CLI tests' `run`), with its table read back (`table`)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from silvia_client._wire import DEFAULT_WIRE
from silvia_client.chat import TurnBuilder
from silvia_client.chat.events import event_decoder
from silvia_client.qa import Observation, Reload, SentEvent
from silvia_client.qa.observe import NOT_JSON

from ..cli._cli import run
from ..client.sse import assistant, body, user

run_cli = run  # `silvia qa ...` in-process, as the CLI tests run a command
SECRET = "qa-s3cret-t0ken-7f2b"  # a token no output may hold
VENDORS = re.compile(r"plaid|snap\s?trade", re.IGNORECASE)
# A provider value shown as one: a JSON string, or a Python repr.
PROVIDER_VALUE = re.compile(r"""["'](plaid|manual|snaptrade)["']""", re.IGNORECASE)
CHECKING = "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"
CARD_ONE = "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"
CARD_TWO = "Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2"
CARDS = "silvia://your-account/credit-card"
AAPL = "silvia://market-data/finnhub/AAPL"
IRS = "https://www.irs.gov/retirement-plans/ira-contribution-limits"

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "qa_script.json")
_MISSING: Any = object()


def assert_private(text: str) -> None:
    """Neither `SECRET` nor a vendor's name nor a provider's value in `text`."""
    assert SECRET not in text
    assert not VENDORS.search(text), VENDORS.search(text)
    assert not PROVIDER_VALUE.search(text), PROVIDER_VALUE.search(text)


def account(*ids: str, provider: str | None = "plaid") -> dict[str, object]:
    """An `account` target for one id, `accounts` for several."""
    if len(ids) == 1:
        return {"kind": "account", "accountId": ids[0], "provider": provider}
    return {"kind": "accounts", "accounts": [{"accountId": i, "provider": provider} for i in ids]}


def cite(
    source: str, target: object = _MISSING, *, title: str = "Title", cited_text: str = "Quoted"
) -> dict[str, object]:
    row: dict[str, object] = {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": cited_text,
    }
    if target is not _MISSING:
        row["target"] = target
    return row


class Raw(str):
    """Event data sent exactly as given (not JSON-encoded)."""


def observe_events(
    events: Sequence[tuple[str, object]],
    *,
    reload: object = _MISSING,
    prompt: str = "How are my accounts?",
) -> Observation:
    """An observation of exactly these events; `done` among them makes it complete."""
    decode = event_decoder(DEFAULT_WIRE)
    builder = TurnBuilder()
    sent: list[SentEvent] = []
    for name, value in events:
        data = str(value) if isinstance(value, Raw) else json.dumps(value)
        event = decode(name, data, builder.text_length)
        builder.apply(event)
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = NOT_JSON
        sent.append(SentEvent(name, data, parsed, event))
    failure = None if builder.done else "the stream ended without `done`"
    if reload is _MISSING:
        reloaded = None
    elif isinstance(reload, Reload):
        reloaded = reload
    else:
        reloaded = Reload(body=reload)
    return Observation(prompt, tuple(sent), builder.build(), failure=failure, reload=reloaded)


def turn_events(
    streamed: Sequence[dict[str, object]],
    summary: Sequence[dict[str, object]] | None = None,
    *,
    text: str = "You have $4,210.55 in checking.",
    message: object = None,
    done: bool = True,
) -> list[tuple[str, object]]:
    """A turn's events: session, text, citations, the summary (default: the streamed rows)."""
    events: list[tuple[str, object]] = [
        ("session", {"sessionId": "sess_1"}),
        ("text", {"text": text}),
    ]
    events += [("citation", {"citation": row}) for row in streamed]
    rows = list(streamed) if summary is None else list(summary)
    events.append(("citations_summary", {"citations": rows}))
    events.append(("message", message if message is not None else {"role": "assistant"}))
    if done:
        events.append(("done", {}))
    return events


def stored(
    citations: Sequence[dict[str, object]], inline: Sequence[dict[str, object]]
) -> dict[str, object]:
    """A session body whose last assistant message holds these rows."""
    return body(user(), assistant(citations=list(citations), inline_citations=list(inline)))


def table(out: str) -> dict[str, list[str]]:
    """The table's cells by rule id, one per prompt, as printed."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("rule "))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rule, *cells = line.split()
        rows[rule] = cells
    return rows


def write_script(path: Path, prompts: Sequence[Mapping[str, Any]], **top: object) -> Path:
    path.write_text(json.dumps({"name": "test", "prompts": prompts, **top}), encoding="utf-8")
    return path


def report(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def cases(junit: Path) -> list[ET.Element]:
    return list(ET.parse(junit).getroot().iter("testcase"))
