"""A user's own script, strictly typed (no `Any`, no cast): the public names as an editor sees them.

Events matched one class at a time and targets narrowed on `kind` (`assert_never` proves
each union closed), every error caught by its own class. `tests/test_typed_user.py` checks
it with pyright strict and runs it on the reference server.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from pathlib import Path

from typing_extensions import assert_never

from silvia_client import (
    APIConnectionError,
    APIError,
    APIStatusError,
    APITimeoutError,
    AsyncChatStream,
    AsyncSilviaClient,
    AuthenticationError,
    BadRequestError,
    ChatEvent,
    ChatStream,
    ClientClosedError,
    ConfigurationError,
    ConflictError,
    EventLoopChangedError,
    IncompleteTurnError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    ResponseTooLargeError,
    ServerStreamError,
    SilviaClient,
    SilviaError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
    Turn,
    UnexpectedResponseError,
    UnprocessableEntityError,
)
from silvia_client.chat import (
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    Timings,
    UnknownEvent,
)
from silvia_client.citations import (
    AccountProvider,
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    Citation,
    CitationLink,
    CitationTarget,
    InlineCitation,
    InvalidAccountIdError,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    ResolvedCitation,
    TaxReferenceTarget,
    WebTarget,
    account_href,
    account_id_candidates,
    parse_citation_target,
    resolve_citation,
)
from silvia_client.qa import Observation, Observer, ScriptFormatError, parse_script
from silvia_client.sessions import Message, Session
from silvia_client.testing import Recording, RecordingFormatError, ReferenceServer

QUESTION = "Where do my accounts stand, and what should I know about Apple, savings and my IRA?"
WEB_APP = "https://app.example"

# One of each target, built as a user builds one for a test of their own.
EVERY_TARGET: tuple[CitationTarget, ...] = (
    WebTarget(url="https://example.com/savings"),
    TaxReferenceTarget(url="https://www.irs.gov/retirement-plans"),
    CardDocumentTarget(url="https://cards.example/terms"),
    MortgageReferenceTarget(url="https://www.consumerfinance.gov/owning-a-home/"),
    MarketDataTarget(ticker="AAPL"),
    AnalysisTarget(),
    AccountTarget(account_id="acc-1", provider="manual"),
    AccountsTarget(accounts=(AccountRef(account_id="acc-1"), AccountRef(account_id="acc-2"))),
    PortfolioTarget(),
)


def describe(target: CitationTarget | None) -> str:
    """One line per target, narrowed on `target.kind`: each branch reads its own attributes."""
    if target is None:
        return "untyped"
    if target.kind == "web":
        return f"web {target.url}"
    if target.kind == "tax_reference":
        return f"tax reference {target.url}"
    if target.kind == "card_document":
        return f"card document {target.url}"
    if target.kind == "mortgage_reference":
        return f"mortgage reference {target.url}"
    if target.kind == "market_data":
        return f"market data {target.ticker}"
    if target.kind == "analysis":
        return "analysis"
    if target.kind == "account":
        provider: AccountProvider | None = target.provider  # for routing: never shown
        routed = " (routed)" if provider is not None else ""
        return f"account {account_href(target.account_id)}{routed}"
    if target.kind == "accounts":
        refs: tuple[AccountRef, ...] = target.accounts
        return "accounts " + " ".join(account_href(ref.account_id) for ref in refs)
    if target.kind == "portfolio":
        return "portfolio"
    assert_never(target)


def show(event: ChatEvent, numbers: dict[str, int]) -> str:
    """What a terminal shows of one event: every class matched, none left over."""
    match event:
        case SessionEvent(session_id=session_id):
            return f"[session {session_id}]"
        case TextEvent(text=text):
            return text
        case CitationEvent(citation=citation):
            return f"[{numbers.setdefault(citation.source, len(numbers) + 1)}]"
        case CitationsSummaryEvent(citations=citations, errors=errors):
            return f"\n[{len(citations)} citations, {len(errors)} rows unread]"
        case MessageEvent():
            return ""  # the model's raw final message: the text has arrived already
        case ErrorEvent(message=message, error_type=error_type):
            return f"\n[error {error_type}: {message}]"
        case DoneEvent():
            return "\n[done]"
        case UnknownEvent(event=name):
            return f"\n[an event this SDK does not know: {name}]"
        case MalformedEvent(event=name, reason=reason):
            return f"\n[a {name} event that could not be read: {reason}]"
        case _:
            assert_never(event)


def caught(client: SilviaClient) -> str:
    """The class of the error a turn ends in, caught by class ("ok": none)."""
    try:
        turn: Turn = client.chat.send("How much is in checking?")
    # Statuses before any event, the most specific first.
    except RateLimitError as error:
        retry_after: float | None = error.retry_after
        return f"RateLimitError {error.status_code} retry after {retry_after}"
    except (
        BadRequestError,
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        ConflictError,
        RequestTooLargeError,
        UnprocessableEntityError,
        InternalServerError,
    ) as error:
        return f"{type(error).__name__} {error.status_code}"
    except APIStatusError as error:
        request_id: str | None = error.request_id
        return f"APIStatusError {error.status_code} {error.error_type} {request_id}"
    except UnexpectedResponseError as error:
        return f"UnexpectedResponseError {error.status_code} {error.content_type}"
    except ResponseTooLargeError as error:
        return f"ResponseTooLargeError {error.limit}"
    # The stream broke off: what arrived is on `.turn`.
    except ServerStreamError as error:
        return f"ServerStreamError {error.error_type} after {len(error.turn.text)} characters"
    except (StreamDisconnectedError, StreamTimeoutError) as error:
        return f"{type(error).__name__} complete={error.turn.complete}"
    except StreamTooLargeError as error:
        return f"StreamTooLargeError {error.limit}"
    except IncompleteTurnError as error:
        partial: Turn = error.turn
        return f"IncompleteTurnError {len(partial.citations)} citations"
    except StreamError as error:
        ids: tuple[str | None, str | None] = (error.request_id, error.session_id)
        return f"StreamError {ids}"
    # Talking to the server went wrong otherwise, or anything else of the SDK's.
    except (APITimeoutError, APIConnectionError, ConfigurationError, APIError, SilviaError) as e:
        return type(e).__name__
    turn_id: str | None = turn.request_id  # what to quote to support about this turn
    return f"ok complete={turn.complete} request id given={turn_id is not None}"


def local_mistakes() -> list[str]:
    """The errors a caller's own mistake raises, before anything is sent."""
    seen: list[str] = []
    try:
        SilviaClient(base_url="http://127.0.0.1:1", timeout=-1.0)
    except ValueError as error:  # a ConfigurationError is a ValueError too
        seen.append(f"{type(error).__name__} is a ValueError: {isinstance(error, SilviaError)}")
    closed = ReferenceServer().client()
    closed.close()
    try:
        closed.chat.send("Anyone there?")
    except ClientClosedError as error:
        seen.append(type(error).__name__)
    kit = ReferenceServer().async_client()  # an async client serves the event loop it ran on
    asyncio.run(kit.chat.send("Hello"))
    try:
        asyncio.run(kit.chat.send("Hello again"))
    except EventLoopChangedError as error:
        seen.append(type(error).__name__)
    try:
        account_href("..")
    except InvalidAccountIdError as error:
        seen.append(type(error).__name__)
    try:
        Recording.loads("not a recording")
    except RecordingFormatError as error:
        seen.append(type(error).__name__)
    try:
        parse_script({"prompts": "not a list"})
    except ScriptFormatError as error:
        seen.append(type(error).__name__)
    return seen


def rows() -> list[str]:
    """Citation rows read as a user reads them off their own store: the models, the links."""
    row: dict[str, object] = {
        "source": "account:acc-1",
        "title": "Checking",
        "cited_text": "$1,200",
        "target": {"kind": "account", "accountId": "acc-1", "provider": "manual"},
    }
    citation = Citation.model_validate(row)
    inline = InlineCitation.model_validate({**row, "offset": 0})
    resolved: ResolvedCitation = resolve_citation(citation, web_url=WEB_APP)
    links: tuple[CitationLink, ...] = resolved.links
    lines = [
        f"{citation.source} {citation.title} {citation.cited_text} {describe(citation.target)}",
        f"inline at {inline.offset}: {describe(inline.target)}",
        f"{resolved.label}: " + " ".join(f"{link.label} {link.href}" for link in links),
        # The ids one of the user's own account rows can be matched by.
        f"ids: {account_id_candidates({'account_id': 'vzeNDwK7KQIm4yEog683', 'name': 'Checking'})}",
    ]
    for target in EVERY_TARGET:
        # Each target turns back into its wire dict, and reads back the same.
        assert parse_citation_target(target.to_wire()) == target
        lines.append(describe(target))
    return lines


def stream_and_reload(client: SilviaClient) -> list[str]:
    """A turn streamed event by event, then its session reloaded: the same typed citations."""
    numbers: dict[str, int] = {}
    with client.chat.stream(
        QUESTION, session_id=None, extra_headers=None, timeout=None, deadline=None
    ) as stream:
        live: ChatStream = stream
        text = "".join(show(event, numbers) for event in live)
        turn = stream.until_done()
    timings: Timings = turn.timings
    lines = [
        text,
        f"complete={turn.complete} session={turn.session_id} text={len(turn.text)}",
        f"first byte {timings.first_byte is not None}, first text {timings.first_text is not None}"
        f", done {timings.done is not None}",
    ]
    for inline in turn.inline_citations:
        offset: int | None = inline.offset  # len(turn.text) when it streamed in
        lines.append(f"at {offset}: {describe(turn.target_for(inline.source))}")
    assert turn.session_id is not None
    session: Session = client.sessions.get(
        turn.session_id, extra_headers=None, timeout=None, deadline=None
    )
    for message in session.messages:
        typed: Message = message
        cited = [describe(typed.target_for(c.source)) for c in typed.citations]
        lines.append(f"{typed.role}: {len(typed.inline_citations)} inline, cites {cited}")
    return lines


def options(client: SilviaClient) -> list[str]:
    """A copy with other options (the same pool), `send`, and the text alone."""
    quick = client.with_options(
        timeout=30.0, max_retries=0, default_headers={"x-app": "typed-user"}, deadline=60.0
    )
    turn = quick.chat.send("How much is in checking?", timeout=30.0, deadline=60.0)
    with quick.chat.stream("What should I know about Apple?") as stream:
        text = "".join(stream.text_stream)
    return [f"send: complete={turn.complete}", f"text_stream: {len(text)} characters"]


def record_and_replay(directory: Path) -> list[str]:
    """A turn observed by QA, saved as a recording, and replayed byte for byte."""
    with Observer.reference(record=True) as qa:
        observation: Observation = qa.observe("How much is in checking?", scenario="account")
    path = directory / "checking.jsonl"
    observation.to_recording().save(path)
    with Recording.load(path).client() as replayed:
        turn = replayed.chat.send("How much is in checking?")
    return [f"replayed: {[describe(c.target) for c in turn.citations]}"]


async def stream_async(client: AsyncSilviaClient) -> list[str]:
    """The async twin: the same events, the same turn."""
    numbers: dict[str, int] = {}
    async with client.chat.stream(QUESTION) as stream:
        alive: AsyncChatStream = stream
        marked = "".join([show(event, numbers) async for event in alive])
        turn = await stream.until_done()
    async with client.chat.stream("How much is in checking?") as stream:
        text = "".join([piece async for piece in stream.text_stream])
    assert turn.session_id is not None
    session = await client.sessions.get(turn.session_id)
    again = await client.chat.send("And my savings?", session_id=turn.session_id)
    return [marked, text, f"{len(session.messages)} messages, then {again.complete}"]


def main() -> dict[str, list[str]]:
    """Everything above on an in-process reference server; what each part printed."""
    server = ReferenceServer()
    out: dict[str, list[str]] = {"rows": rows(), "local": local_mistakes()}
    with server.client() as client:
        out["stream"] = stream_and_reload(client)
        out["options"] = options(client)
        out["caught"] = [caught(client)]
        out["caught"].append(caught(client.with_options(max_event_bytes=64)))  # a copy: not closed
    with tempfile.TemporaryDirectory() as directory:
        out["recording"] = record_and_replay(Path(directory))
    with socket.socket() as refusing:  # bound, never listening: connections are refused
        refusing.bind(("127.0.0.1", 0))
        port: int = refusing.getsockname()[1]
        nowhere = SilviaClient(
            base_url=f"http://127.0.0.1:{port}",
            token="typed-user-token",
            max_retries=0,
            deadline=30.0,
            max_event_bytes=1 << 20,
            max_response_bytes=1 << 24,
        )
        with nowhere:
            out["caught"].append(caught(nowhere))

    async def both() -> list[str]:
        async with server.async_client() as client:
            return await stream_async(client)

    out["async"] = asyncio.run(both())
    return out
