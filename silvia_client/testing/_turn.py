"""Playing a script: the turn the server streams, with targets from the registry.

Where things are: `play` runs a script against a fresh `TargetRegistry`;
`turn_steps` lays the turn out as the wire contract's SSE stream.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import WireFormat
from ._derive import SearchResult, TargetRegistry, search_results
from ._script import Checkpoint, Cite, Say, ScriptItem
from ._steps import PING, Effect, Event, Pause, Step

WireCitation = dict[str, object]

# A few words per delta, so a turn streams as many small events, as a model does.
_DELTA = re.compile(r"\s*(?:\S+\s*){1,3}|\s+")
PING_EVERY = 16  # events between keep-alive comments


class ScriptError(ValueError):
    """A script that cannot be played, e.g. it cites a source its turn never wrote."""


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class PlayedTurn:
    """What the model's turn amounts to on the wire."""

    stream: tuple[TextDelta | WireCitation, ...]  # in order; citations carry their target then
    text: str
    summary: tuple[WireCitation, ...]  # de-duplicated, final targets
    message: dict[str, object]  # Anthropic's final message: no targets
    final_targets: dict[str, dict[str, object] | None]  # every source written, at the end

    @property
    def inline_citations(self) -> tuple[WireCitation, ...]:
        return tuple(item for item in self.stream if isinstance(item, dict))


def play(script: Sequence[ScriptItem], checkpoint: Checkpoint | None = None) -> PlayedTurn:
    """Play `script`, resuming from `checkpoint` if given."""
    registry = TargetRegistry()
    written: list[SearchResult] = []
    latest: dict[str, int] = {}  # source -> index of its latest search_result block

    def write(result: SearchResult, *, register: bool) -> None:
        latest[result.source] = len(written)
        written.append(result)
        if register:
            registry.write(result)

    if checkpoint is not None:
        for call in checkpoint.tool_calls:
            for result in search_results(call):
                write(result, register=checkpoint.carries_targets)

    stream: list[TextDelta | WireCitation] = []
    blocks: list[dict[str, object]] = []  # the final message's text blocks
    block_citations: list[WireCitation] = []
    for item in script:
        if isinstance(item, Say):
            block_citations = []
            blocks.append({"type": "text", "text": item.text, "citations": block_citations})
            stream.extend(TextDelta(delta) for delta in _DELTA.findall(item.text))
        elif isinstance(item, Cite):
            citation = _citation(item, written, latest)
            if not blocks:
                blocks.append({"type": "text", "text": "", "citations": block_citations})
            block_citations.append(citation)
            target = registry.target_for(item.source)
            stream.append(citation if target is None else {**citation, "target": target.to_wire()})
        else:
            for result in search_results(item):
                write(result, register=True)

    summary: dict[str, WireCitation] = {}
    for citation in (item for item in stream if isinstance(item, dict)):
        bare = {key: value for key, value in citation.items() if key != "target"}
        target = registry.target_for(str(bare["source"]))
        summary.setdefault(
            repr(sorted(bare.items())),
            bare if target is None else {**bare, "target": target.to_wire()},
        )
    text = "".join(item.text for item in stream if isinstance(item, TextDelta))
    for block in blocks:
        if not block["citations"]:
            del block["citations"]
    final_targets = {}
    for source in dict.fromkeys(result.source for result in written):
        target = registry.target_for(source)
        final_targets[source] = None if target is None else target.to_wire()
    return PlayedTurn(
        stream=tuple(stream),
        text=text,
        summary=tuple(summary.values()),
        message={
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": "silvia-reference",
            "content": blocks,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            # A rough count: four characters a token, as good as a fake model needs.
            "usage": {"input_tokens": 1200, "output_tokens": max(1, len(text) // 4)},
        },
        final_targets=final_targets,
    )


def _citation(cite: Cite, written: list[SearchResult], latest: dict[str, int]) -> WireCitation:
    index = latest.get(cite.source)
    if index is None:
        raise ScriptError(f"cites {cite.source!r}, which no tool call of this turn wrote")
    result = written[index]
    start, end = cite.block_range
    if not 0 <= start < end <= len(result.content):
        raise ScriptError(
            f"cites blocks [{start}, {end}) of {cite.source!r}, which has {len(result.content)}"
        )
    return {
        "type": "search_result_location",
        "source": result.source,
        "title": result.title,
        "cited_text": "\n".join(result.content[start:end]),
        "search_result_index": index,
        "start_block_index": start,
        "end_block_index": end,
    }


def turn_steps(
    turn: PlayedTurn,
    *,
    session_id: str,
    wire: WireFormat,
    pace: float = 0.0,
    on_start: Callable[[], None] | None = None,
    on_complete: Callable[[], None] | None = None,
) -> list[Step]:
    """The SSE stream of one turn; `on_complete` runs just before `done` is sent."""
    names = wire.events
    steps: list[Step] = []
    if on_start is not None:
        steps.append(Effect(on_start))
    steps += [Event(names.session, {wire.session_id_key: session_id}), PING]
    for count, item in enumerate(turn.stream, start=1):
        if pace > 0:
            steps.append(Pause(pace))
        if isinstance(item, TextDelta):
            steps.append(Event(names.text, {wire.text_key: item.text}))
        else:
            steps.append(Event(names.citation, {wire.citation_key: item}))
        if count % PING_EVERY == 0:
            steps.append(PING)
    steps.append(Event(names.citations_summary, {wire.citations_key: list(turn.summary)}))
    steps.append(Event(names.message, turn.message))
    if on_complete is not None:
        steps.append(Effect(on_complete))
    steps.append(Event(names.done, {}))
    return steps
