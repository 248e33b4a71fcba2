"""A Silvia that is not Silvia: the reference server, its scenarios, and ways to run it.

::

    from silvia_client.testing import ReferenceServer

    server = ReferenceServer()
    with server.client() as client:           # a ready SilviaClient, in-process
        ...
    with server.serve_loopback() as url:      # a real socket on 127.0.0.1
        ...

A scenario is a scripted turn (tool results, text, citations, maybe a fault);
the server derives every source and target from it by the doc's rules, streams
it in the wire contract's events, and stores it for the session endpoint.
`expected_turn(scenario)` says what a client should assemble from it. Recordings
capture a live turn, save it and replay it (see `_recording.py`).
"""

from typing import TYPE_CHECKING

from .._lazy import load_on_first_use

# Where each public name lives; each is imported on first use (`_lazy.py` says why).
_WHERE = {
    "._broken": "BROKEN_RULES BROKEN_SCENARIOS",
    "._derive": "humanize_citation_url label_slug",
    "._expected": "ExpectedTurn expected_turn",
    "._faults": (
        "DropMidEvent EchoToken EndWithoutDone Fault HttpError KeepAliveForever SendEndlessLine "
        "SendError SendGzipBomb SendMalformed SendOversizedEvent SendUnknown Stall Trickle"
    ),
    "._library": "DEFAULT_SCENARIO LEGACY_HISTORY SCENARIOS scenarios",
    "._loopback": "LoopbackServer",
    "._record_transport": "Capture RecordingTransport arecord_turn record_turn",
    "._recording": "Recording",
    "._recording_parts": (
        "RecordedChunk RecordedReload RecordedRequest RecordedResponse RecordingFormatError"
    ),
    "._replay": "ReplayTransport",
    "._replay_server": "RECORDING_COMMAND ReplayServer",
    "._scenario": "SCENARIO_COMMAND SCENARIO_HEADER Rewrite Scenario is_scenario_name",
    "._server": "ReferenceServer SessionStore StoredSession",
    "._script": (
        "Checkpoint Cite PriorTurn Say ScriptItem "
        "ExaArticle ExecutePython ExecuteSql ReadLibraryDocument SearchWeb ToolResult WebResult "
        "read_credit_card_document read_mortgage_authority read_tax_authority"
    ),
    "._transport": "IN_PROCESS_URL InProcessTransport",
    "._turn": "ScriptError",
}
# Written out, for tools that read the source (mkdocstrings); a test holds it to the table.
__all__ = [
    "BROKEN_RULES",
    "BROKEN_SCENARIOS",
    "DEFAULT_SCENARIO",
    "IN_PROCESS_URL",
    "LEGACY_HISTORY",
    "RECORDING_COMMAND",
    "SCENARIOS",
    "SCENARIO_COMMAND",
    "SCENARIO_HEADER",
    "Capture",
    "Checkpoint",
    "Cite",
    "DropMidEvent",
    "EchoToken",
    "EndWithoutDone",
    "ExaArticle",
    "ExecutePython",
    "ExecuteSql",
    "ExpectedTurn",
    "Fault",
    "HttpError",
    "InProcessTransport",
    "KeepAliveForever",
    "LoopbackServer",
    "PriorTurn",
    "ReadLibraryDocument",
    "RecordedChunk",
    "RecordedReload",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "RecordingFormatError",
    "RecordingTransport",
    "ReferenceServer",
    "ReplayServer",
    "ReplayTransport",
    "Rewrite",
    "Say",
    "Scenario",
    "ScriptError",
    "ScriptItem",
    "SearchWeb",
    "SendEndlessLine",
    "SendError",
    "SendGzipBomb",
    "SendMalformed",
    "SendOversizedEvent",
    "SendUnknown",
    "SessionStore",
    "Stall",
    "StoredSession",
    "ToolResult",
    "Trickle",
    "WebResult",
    "arecord_turn",
    "expected_turn",
    "humanize_citation_url",
    "is_scenario_name",
    "label_slug",
    "read_credit_card_document",
    "read_mortgage_authority",
    "read_tax_authority",
    "record_turn",
    "scenarios",
]
load_on_first_use(__name__, {module: tuple(names.split()) for module, names in _WHERE.items()})

if TYPE_CHECKING:  # the names of `__all__`, so re-exported
    from ._broken import BROKEN_RULES, BROKEN_SCENARIOS
    from ._derive import humanize_citation_url, label_slug
    from ._expected import ExpectedTurn, expected_turn
    from ._faults import (
        DropMidEvent,
        EchoToken,
        EndWithoutDone,
        Fault,
        HttpError,
        KeepAliveForever,
        SendEndlessLine,
        SendError,
        SendGzipBomb,
        SendMalformed,
        SendOversizedEvent,
        SendUnknown,
        Stall,
        Trickle,
    )
    from ._library import DEFAULT_SCENARIO, LEGACY_HISTORY, SCENARIOS, scenarios
    from ._loopback import LoopbackServer
    from ._record_transport import Capture, RecordingTransport, arecord_turn, record_turn
    from ._recording import Recording
    from ._recording_parts import (
        RecordedChunk,
        RecordedReload,
        RecordedRequest,
        RecordedResponse,
        RecordingFormatError,
    )
    from ._replay import ReplayTransport
    from ._replay_server import RECORDING_COMMAND, ReplayServer
    from ._scenario import SCENARIO_COMMAND, SCENARIO_HEADER, Rewrite, Scenario, is_scenario_name
    from ._script import (
        Checkpoint,
        Cite,
        ExaArticle,
        ExecutePython,
        ExecuteSql,
        PriorTurn,
        ReadLibraryDocument,
        Say,
        ScriptItem,
        SearchWeb,
        ToolResult,
        WebResult,
        read_credit_card_document,
        read_mortgage_authority,
        read_tax_authority,
    )
    from ._server import ReferenceServer, SessionStore, StoredSession
    from ._transport import IN_PROCESS_URL, InProcessTransport
    from ._turn import ScriptError
