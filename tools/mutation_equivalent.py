"""The mutants of `tools/mutation.py` that change nothing observable, each with why.

A mutant is named as mutmut names it (`mutmut results` in `build/mutation/<group>/`).
An entry that no longer matches a surviving mutant is reported as stale by the
script, so this list shrinks with the code it describes.
"""

from __future__ import annotations

# Mutants that change nothing observable, by mutmut's name: name -> why, one line each.
EQUIVALENT: dict[str, str] = {
    "silvia_client.citations._parse.x_parse_citation_target__mutmut_11": (
        "calls None for an unknown kind: the `except Exception` turns that into None, as before"
    ),
    "silvia_client.citations._links.x_encode_uri_component__mutmut_12": (
        "'UTF-16-LE' for 'utf-16-le': codec names are case-insensitive"
    ),
    "silvia_client.citations._links.x_encode_uri_component__mutmut_16": (
        "'UTF-16-LE' for 'utf-16-le': codec names are case-insensitive"
    ),
    "silvia_client.citations._links.x__account_link__mutmut_8": (
        "urljoin(origin, href) even when origin is '': urljoin('', href) is href"
    ),
    "silvia_client.citations._links.x_resolve_citation__mutmut_7": (
        "drops stacklevel=2, which is web_origin's default"
    ),
    "silvia_client.sessions.xǁSessionsǁ_fetch__mutmut_14": (
        "None for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.xǁSessionsǁ_fetch__mutmut_24": (
        "'XXgetXX' for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.xǁSessionsǁ_fetch__mutmut_25": (
        "'GET' for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.xǁAsyncSessionsǁ_fetch__mutmut_14": (
        "None for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.xǁAsyncSessionsǁ_fetch__mutmut_24": (
        "'XXgetXX' for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.xǁAsyncSessionsǁ_fetch__mutmut_25": (
        "'GET' for 'get': `_call` tells only 'chat' apart; any other kind gets a GET's settings"
    ),
    "silvia_client.sessions.x_session_path__mutmut_14": (
        "quote(safe='XXXX'): 'X' is a letter, which quote never escapes"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_11": (
        "None for `pending = b''`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_44": (
        "None for `pending = b''`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_15": (
        "None for `after_cr = False`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_59": (
        "None for `after_cr = False`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_154": (
        "None for `too_large = False`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_38": (
        "None for `at_start = False`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_20": (
        "None for `held = ''`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_102": (
        "None for `held = ''`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_17": (
        "None for `partial = []`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_108": (
        "None for `partial = []`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_176": (
        "None for `partial = []`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_213": (
        "None for `event = ''`: only ever tested for truth, or set anew before it is read"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_18": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_19": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_109": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_110": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_177": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_178": (
        "partial_bytes off while `partial` is empty: read only when `partial` is not"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_16": (
        "after_cr True at the start: it skips a leading LF, a blank line with nothing pending"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_2": (
        "short = limit / 4 (a float): run lines no longer match, the line loop reads them (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_3": (
        "short = limit // 5: fewer lines skip measuring, which finds them within the limit (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_141": (
        "window > len(text): one more match at the end of the text finds nothing (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_145": (
        "len < held_max: that rest goes to the line loop, which reads it the same (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_179": (
        "measures lines of a text under `short` too, which are all within the limit (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_180": (
        "measures lines of a text of exactly `short`, all within the limit (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_197": (
        "measures data of exactly `short` characters, within the limit (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_217": (
        "`data: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_218": (
        "`data: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_222": (
        "`event: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_223": (
        "`event: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_264": (
        "joins one line into itself: the same string (memory)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_265": (
        "two lines kept unjoined until the next chunk or the event's end (memory, not output)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_33": (
        "a 3-byte first chunk that is a BOM waits for more, then is dropped as before"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_34": (
        "a 3-byte first chunk that is a BOM waits for more, then is dropped as before"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_52": (
        "utf_8_decode's `final` defaults to False"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_97": (
        "whether a held line is read with the run or by the line loop: the same events (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_98": (
        "whether a held line is read with the run or by the line loop: the same events (speed)"
    ),
    "silvia_client._sse_reader.x_read_events__mutmut_99": (
        "whether a held line is read with the run or by the line loop: the same events (speed)"
    ),
    "silvia_client._sse_reader.x__utf8_len__mutmut_1": (
        "encodes ASCII too: the same length (speed)"
    ),
    "silvia_client._sse.xǁ_Inboxǁ__init____mutmut_1": (
        "'' for None: the first chunk is always put before the reader is resumed"
    ),
    "silvia_client.citations._rows.x__read_target__mutmut_2": (
        "isinstance decides alone: a dict is no target value (speed)"
    ),
    "silvia_client.citations._rows_read.x_citation_from_json__mutmut_97": (
        "tuple(None) raises TypeError: `_target_from_json` reads the target, the same (speed)"
    ),
    "silvia_client.citations._rows_read.x__validate__mutmut_2": (
        "copies plain dicts too: the same row (speed)"
    ),
    "silvia_client.citations._rows_read.x__validate__mutmut_3": (
        "pydantic-core >= 2.19 reads a dict subclass through its methods, as dict() does"
    ),
    "silvia_client.citations._rows_read.x__new_shape__mutmut_1": (
        "the table of shapes holds one more before it is emptied (memory)"
    ),
    "silvia_client.citations._rows_read.x__target_from_json__mutmut_15": (
        "the table of targets holds one more before it is emptied (memory)"
    ),
    "silvia_client.citations._rows_read.x__target_from_json__mutmut_3": (
        "a JSON target that is no object parses to None, as None does"
    ),
    "silvia_client.citations._rows_read.x__reason__mutmut_4": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows_read.x__reason__mutmut_5": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows_read.x__reason__mutmut_6": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows_read.x__reason__mutmut_7": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows_read.x__reason__mutmut_11": (
        "a row's error location is one field or none: the joiner never shows"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_1": (
        "the general setter for the slot's own: the same attribute set (speed)"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_6": (
        "the three names are slots of both models: the same setter (speed)"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_7": (
        "the three names are slots of both models: the same setter (speed)"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_12": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_13": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_14": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_15": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_16": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_17": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
    "silvia_client.citations._rows_read.x__slot_setter__mutmut_18": (
        "the general setter, for a name that is no slot: pydantic's three are slots"
    ),
}
