"""Deterministic inputs shared by the benchmarks: SSE bodies and session bodies.

Everything here is built from a seeded `random.Random`, so two runs (and the
two sides of one run) see exactly the same bytes. Nothing imports
`silvia_client`: the inputs are wire data, written the way the server writes
them (`chat-citation-targets.md`, `wire-contract.md`).

The event mix of a chat turn (`MIXES`): `session` first; then mostly `text`
deltas of a few words, `citation`s, and a `: ping` keep-alive comment now and
then; then `citations_summary`, `message` and `done`.

* `tenth` (the first mix): a `citation` every tenth event, from a handful of
  repeating sources whose targets are of mixed kinds (accounts, web, market
  data, ...). The two account sources are written again by a later "tool
  call" with another account, so their targets pool (`account` then
  `accounts`), as the server's registry sends them.
* `heavy` (citation-heavy): a `citation` every fourth event, each with an
  `account`, `market_data`, `tax_reference` or `web` target.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "CITATION_EVERY",
    "MIXES",
    "PING_EVERY",
    "Turn",
    "anthropic_body",
    "build_turn",
    "chunks",
    "session_body",
    "silvia_body",
]

CITATION_EVERY = 10  # about one citation per this many events
PING_EVERY = 50  # one keep-alive comment per this many events

# Words of a delta or a quote, some of them non-ASCII (several UTF-8 bytes each).
_VOCABULARY = (
    "the account balance is as of your last sync and checking savings transfer dividend "
    "yield portfolio allocation index fund expense ratio mortgage rate escrow credit card "
    "statement APR rewards tax bracket deduction withholding net worth market price "
    "ticker shares cash flow budget spending category recurring subscription interest "
    "compounding €1,234.56 café résumé 12.5% $4,210.00 — →"
)
_WORDS = _VOCABULARY.split()

_CHECKING = "silvia://your-account/checking"
_CARD = "silvia://your-account/credit-card"


def _account(account_id: str, provider: str | None) -> dict[str, object]:
    return {"kind": "account", "accountId": account_id, "provider": provider}


# (source, title, target on first write, target on a later write or None)
_SOURCES: tuple[tuple[str, str, dict[str, object] | None, dict[str, object] | None], ...] = (
    (
        _CHECKING,
        "Checking",
        _account("acc_5f2b9c1e7d4a4b8e9f0a", "plaid"),
        _account("acc_77d0e2aa1c9f4e6b8d21", "plaid"),
    ),
    (
        _CARD,
        "Credit card",
        _account("c8a1f4e2-6b7d-4c3e-9a5f-1d2e3f4a5b6c", "manual"),
        _account("snap_9d8c7b6a5f4e3d2c1b0a", "snaptrade"),
    ),
    ("silvia://your-portfolio", "Portfolio", {"kind": "portfolio"}, None),
    (
        "silvia://market-data/finnhub/VTI",
        "VTI quote",
        {"kind": "market_data", "ticker": "VTI"},
        None,
    ),
    (
        "https://www.example-news.com/markets/2025/rates-hold-steady",
        "Rates hold steady",
        {"kind": "web", "url": "https://www.example-news.com/markets/2025/rates-hold-steady"},
        None,
    ),
    (
        "https://www.irs.gov/publications/p590a",
        "Publication 590-A",
        {"kind": "tax_reference", "url": "https://www.irs.gov/publications/p590a"},
        None,
    ),
    ("silvia://analysis", "Analysis", {"kind": "analysis"}, None),
    ("silvia://search/search_web", "Web search", None, None),
)


# Sources a session's history cites besides `_SOURCES`: the two target kinds the
# chat mixes leave out, so that a history holds all nine.
_MORE_SOURCES: tuple[tuple[str, str, dict[str, object] | None, dict[str, object] | None], ...] = (
    (
        "https://www.example-bank.com/cards/agreement.pdf",
        "Cardmember agreement",
        {"kind": "card_document", "url": "https://www.example-bank.com/cards/agreement.pdf"},
        None,
    ),
    (
        "https://www.consumerfinance.gov/owning-a-home/",
        "Owning a home",
        {"kind": "mortgage_reference", "url": None},
        None,
    ),
)


@dataclass(frozen=True)
class Mix:
    """Which events a turn's body holds: a citation every `citation_every`, from `sources`."""

    citation_every: int
    sources: tuple[int, ...]  # indexes into _SOURCES


MIXES = {
    "tenth": Mix(CITATION_EVERY, tuple(range(len(_SOURCES)))),
    "heavy": Mix(4, (0, 3, 4, 5)),  # account, market_data, web, tax_reference
}


@dataclass(frozen=True)
class Turn:
    """One turn's content, independent of any wire format."""

    session_id: str
    items: tuple[str | dict[str, object], ...]  # text deltas and citation rows, in order
    pings_after: frozenset[int]  # item indexes followed by a keep-alive
    summary: tuple[dict[str, object], ...]
    text: str

    @property
    def citation_count(self) -> int:
        return sum(1 for item in self.items if isinstance(item, dict))


def _delta(rng: random.Random) -> str:
    return "".join(rng.choice(_WORDS) + " " for _ in range(rng.randint(1, 3)))


def _row(
    rng: random.Random,
    source_index: int,
    target: dict[str, object] | None,
    sources: tuple[tuple[str, str, dict[str, object] | None, dict[str, object] | None], ...] = (),
    quote: tuple[int, int] = (8, 30),
) -> dict[str, object]:
    source, title, _, _ = (sources or _SOURCES)[source_index]
    row: dict[str, object] = {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(*quote))),
        "search_result_index": source_index,
        "start_block_index": 0,
        "end_block_index": rng.randint(1, 4),
    }
    if target is not None:
        row["target"] = target
    return row


def build_turn(events: int, *, seed: int = 1, mix: str = "tenth") -> Turn:
    """A turn of exactly `events` events: session + deltas/citations + summary, message, done."""
    if events < 5:
        raise ValueError("a turn needs at least 5 events")
    rng = random.Random(seed)
    every, sources = MIXES[mix].citation_every, MIXES[mix].sources
    body_events = events - 4  # session, citations_summary, message, done
    items: list[str | dict[str, object]] = []
    final: dict[int, dict[str, object] | None] = {}
    for index in range(body_events):
        if index % every == every - 1:
            which = rng.choice(sources)
            first, later = _SOURCES[which][2], _SOURCES[which][3]
            # Past the first third of the turn, a second tool call has written the
            # account sources again with another account (in the first mix): their
            # targets pool.
            pools = mix == "tenth" and later is not None and index > body_events // 3
            target = later if pools else first
            items.append(_row(rng, which, target))
            final[which] = target
        else:
            items.append(_delta(rng))
    pings = frozenset(i for i in range(body_events) if i % PING_EVERY == PING_EVERY // 2)
    summary = tuple(_row(rng, which, final[which]) for which in sorted(final))
    text = "".join(item for item in items if isinstance(item, str))
    return Turn(f"sess_{seed:08d}", tuple(items), pings, summary, text)


def _dumps(value: object) -> str:
    # As a JavaScript server writes it: compact, non-ASCII as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def silvia_body(turn: Turn) -> bytes:
    """The turn as Silvia's SSE stream (wire-contract.md)."""
    out = [f"event: session\ndata: {_dumps({'sessionId': turn.session_id})}\n\n"]
    for index, item in enumerate(turn.items):
        if isinstance(item, str):
            out.append(f"event: text\ndata: {_dumps({'text': item})}\n\n")
        else:
            out.append(f"event: citation\ndata: {_dumps({'citation': item})}\n\n")
        if index in turn.pings_after:
            out.append(": ping\n\n")
    message = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": turn.text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": len(turn.items)},
    }
    out.append(f"event: citations_summary\ndata: {_dumps({'citations': list(turn.summary)})}\n\n")
    out.append(f"event: message\ndata: {_dumps(message)}\n\n")
    out.append("event: done\ndata: {}\n\n")
    return "".join(out).encode()


def anthropic_body(turn: Turn) -> bytes:
    """The same content as Anthropic's Messages stream, with `search_result_location` citations.

    Yields as many events from `anthropic.Stream` as `silvia_body` gives typed
    events: message_start, content_block_start, the deltas (one fewer text
    delta), content_block_stop, message_delta, message_stop. Keep-alives are
    Anthropic's `ping` events (which `Stream` reads and skips), at the same places.
    """
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 2095, "output_tokens": 1},
        },
    }
    out = [
        f"event: message_start\ndata: {_dumps(start)}\n\n",
        "event: content_block_start\ndata: "
        + _dumps(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": "", "citations": []},
            }
        )
        + "\n\n",
    ]
    dropped_one_text = False
    for index, item in enumerate(turn.items):
        if isinstance(item, str):
            if not dropped_one_text:
                dropped_one_text = True  # keeps the event counts equal
                continue
            delta: dict[str, object] = {"type": "text_delta", "text": item}
        else:
            citation = {key: value for key, value in item.items() if key != "target"}
            delta = {"type": "citations_delta", "citation": citation}
        event = {"type": "content_block_delta", "index": 0, "delta": delta}
        out.append(f"event: content_block_delta\ndata: {_dumps(event)}\n\n")
        if index in turn.pings_after:
            out.append('event: ping\ndata: {"type":"ping"}\n\n')
    stop_reason = {"stop_reason": "end_turn", "stop_sequence": None}
    message_delta = {
        "type": "message_delta",
        "delta": stop_reason,
        "usage": {"output_tokens": len(turn.items)},
    }
    out.append(
        "event: content_block_stop\ndata: "
        + _dumps({"type": "content_block_stop", "index": 0})
        + "\n\n"
    )
    out.append(f"event: message_delta\ndata: {_dumps(message_delta)}\n\n")
    out.append('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return "".join(out).encode()


def chunks(body: bytes, size: int) -> list[bytes]:
    """`body` cut into network-sized chunks (`size` bytes; 0: one chunk per SSE event)."""
    if size > 0:
        return [body[i : i + size] for i in range(0, len(body), size)]
    parts = body.split(b"\n\n")
    tail = parts.pop()  # empty: the body ends with a blank line
    assert not tail
    return [part + b"\n\n" for part in parts]


def iter_chunks(parts: list[bytes]) -> Iterator[bytes]:
    yield from parts


# --- session history -------------------------------------------------------------


def _pooled(first: dict[str, object], later: dict[str, object]) -> dict[str, object]:
    refs = [{"accountId": t["accountId"], "provider": t["provider"]} for t in (first, later)]
    return {"kind": "accounts", "accounts": refs}


def session_body(
    messages: int, citations_per_message: int, *, seed: int = 2, mix: str = "stored"
) -> bytes:
    """A session body of `messages` messages (alternating user/assistant).

    `mix="stored"` (the first history mix) is described below. `mix="typed"`
    differs in three ways: its sources are those of `stored` plus a card
    document and a mortgage reference, so rows carry all nine target kinds, and
    one source in ten is untyped (`silvia://search/search_web`); no message was
    saved before targets existed; and a message's text, and a row's quote, are
    shorter.

    Each message is one stored turn: `citations_per_message` inline citations
    (with `offset`) in the order they streamed, each with the target its source
    had then, and as many summary citations, the same passages with their final
    targets. In about a third of the messages a second tool call wrote the
    account sources again with another account, so from the middle of the turn
    their inline rows, and their summary rows, carry the pooled `accounts`
    target. About one message in ten was saved before targets existed: no row
    has a target. Rows carry the extra fields a stored Anthropic citation has,
    and messages carry fields the SDK does not model.
    """
    rng = random.Random(seed)
    typed = mix == "typed"
    sources = _SOURCES + _MORE_SOURCES if typed else _SOURCES
    quote = (6, 20) if typed else (8, 30)  # words of `cited_text`
    out: list[dict[str, object]] = []
    for index in range(messages):
        text = "".join(_delta(rng) for _ in range(20 if typed else 40))
        legacy = rng.random() < 0.1 and not typed
        second_call = rng.random() < 0.3
        picks = [rng.randrange(len(sources)) for _ in range(citations_per_message)]
        final: dict[int, dict[str, object] | None] = {}
        inline = []
        for position, which in enumerate(picks):
            first, later = sources[which][2], sources[which][3]
            # Once pooled, a source stays pooled for the rest of the turn.
            pools = (which in final and final[which] != first) or (
                second_call and position >= citations_per_message // 2
            )
            target = first
            if legacy:
                target = None
            elif first is not None and later is not None and pools:
                target = _pooled(first, later)
            final[which] = target
            row = _row(rng, which, target, sources, quote)
            row["offset"] = rng.randrange(len(text))
            inline.append(row)
        rows = [_row(rng, which, final[which], sources, quote) for which in picks]
        out.append(
            {
                "id": f"msg_{seed}_{index:06d}",
                "role": "assistant" if index % 2 else "user",
                "content": text,
                "created_at": f"2025-03-{1 + index % 28:02d}T12:{index % 60:02d}:00.000Z",
                "citations": rows,
                "inline_citations": inline,
                "model": "claude-sonnet-4-6",
                "token_count": rng.randint(50, 900),
            }
        )
    body = {
        "session": {
            "id": f"sess_{seed:08d}",
            "title": "Budget review",
            "created_at": "2025-03-01T12:00:00.000Z",
            "user_id": "user_123",
        },
        "messages": out,
    }
    return _dumps(body).encode()
