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

# The public names, one table: where each lives. Each is imported on first use, so
# that loading the pytest plugin costs next to nothing in runs that do not use it
# (see `silvia_client/_lazy.py`); type checkers read the same names from the block
# below (`X as X`: re-exported), and a test holds the two alike.
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
# Written out, not computed from the table, so that tools that read the source (the
# reference site's mkdocstrings) see the public names; a test holds the two alike.
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

if TYPE_CHECKING:
    from ._broken import BROKEN_RULES as BROKEN_RULES
    from ._broken import BROKEN_SCENARIOS as BROKEN_SCENARIOS
    from ._derive import humanize_citation_url as humanize_citation_url
    from ._derive import label_slug as label_slug
    from ._expected import ExpectedTurn as ExpectedTurn
    from ._expected import expected_turn as expected_turn
    from ._faults import DropMidEvent as DropMidEvent
    from ._faults import EchoToken as EchoToken
    from ._faults import EndWithoutDone as EndWithoutDone
    from ._faults import Fault as Fault
    from ._faults import HttpError as HttpError
    from ._faults import KeepAliveForever as KeepAliveForever
    from ._faults import SendEndlessLine as SendEndlessLine
    from ._faults import SendError as SendError
    from ._faults import SendGzipBomb as SendGzipBomb
    from ._faults import SendMalformed as SendMalformed
    from ._faults import SendOversizedEvent as SendOversizedEvent
    from ._faults import SendUnknown as SendUnknown
    from ._faults import Stall as Stall
    from ._faults import Trickle as Trickle
    from ._library import DEFAULT_SCENARIO as DEFAULT_SCENARIO
    from ._library import LEGACY_HISTORY as LEGACY_HISTORY
    from ._library import SCENARIOS as SCENARIOS
    from ._library import scenarios as scenarios
    from ._loopback import LoopbackServer as LoopbackServer
    from ._record_transport import Capture as Capture
    from ._record_transport import RecordingTransport as RecordingTransport
    from ._record_transport import arecord_turn as arecord_turn
    from ._record_transport import record_turn as record_turn
    from ._recording import Recording as Recording
    from ._recording_parts import RecordedChunk as RecordedChunk
    from ._recording_parts import RecordedReload as RecordedReload
    from ._recording_parts import RecordedRequest as RecordedRequest
    from ._recording_parts import RecordedResponse as RecordedResponse
    from ._recording_parts import RecordingFormatError as RecordingFormatError
    from ._replay import ReplayTransport as ReplayTransport
    from ._replay_server import RECORDING_COMMAND as RECORDING_COMMAND
    from ._replay_server import ReplayServer as ReplayServer
    from ._scenario import SCENARIO_COMMAND as SCENARIO_COMMAND
    from ._scenario import SCENARIO_HEADER as SCENARIO_HEADER
    from ._scenario import Rewrite as Rewrite
    from ._scenario import Scenario as Scenario
    from ._scenario import is_scenario_name as is_scenario_name
    from ._script import Checkpoint as Checkpoint
    from ._script import Cite as Cite
    from ._script import ExaArticle as ExaArticle
    from ._script import ExecutePython as ExecutePython
    from ._script import ExecuteSql as ExecuteSql
    from ._script import PriorTurn as PriorTurn
    from ._script import ReadLibraryDocument as ReadLibraryDocument
    from ._script import Say as Say
    from ._script import ScriptItem as ScriptItem
    from ._script import SearchWeb as SearchWeb
    from ._script import ToolResult as ToolResult
    from ._script import WebResult as WebResult
    from ._script import read_credit_card_document as read_credit_card_document
    from ._script import read_mortgage_authority as read_mortgage_authority
    from ._script import read_tax_authority as read_tax_authority
    from ._server import ReferenceServer as ReferenceServer
    from ._server import SessionStore as SessionStore
    from ._server import StoredSession as StoredSession
    from ._transport import IN_PROCESS_URL as IN_PROCESS_URL
    from ._transport import InProcessTransport as InProcessTransport
    from ._turn import ScriptError as ScriptError
