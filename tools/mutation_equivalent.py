"""The mutants of `tools/mutation.py` that change nothing observable, each with why.

A mutant is named as mutmut names it (`mutmut results` in `build/mutation/<group>/`).
An entry that no longer matches a surviving mutant is reported as stale by the
script, so this list shrinks with the code it describes.
"""

from __future__ import annotations

# Mutants that change nothing observable, by mutmut's name: name -> why, one line each.
EQUIVALENT: dict[str, str] = {
    # sse, events, rows (session 4)
    "silvia_client.chat.events.xǁEventDecoderǁ__call____mutmut_12": (
        "from_json caching string values too: the same value (that cache has no API to look in)"
    ),
    "silvia_client.chat.events.xǁEventDecoderǁ__call____mutmut_45": (
        "from_json caching string values too: the same value (that cache has no API to look in)"
    ),
    "silvia_client.chat.events.xǁEventDecoderǁ__call____mutmut_54": (
        "offset None to the session, message, error and done readers, which never read it"
    ),
    "silvia_client._sse.x__reads_escapes_right__mutmut_4": (
        "the probe's escapes in upper-case hex: JSON reads \\u00E9 and \\u00e9 alike"
    ),
    "silvia_client.citations._targets.x_parse_citation_target__mutmut_55": (
        "reads `ref.account_id` of a None ref: the `except Exception` turns that into None"
    ),
    "silvia_client.citations._links.x_encode_uri_component__mutmut_23": (
        "safe='XX!*'()XX': 'X' is a letter, which quote never escapes"
    ),
    "silvia_client.citations._rows.x_load_citations__mutmut_23": (
        "copies a plain dict too before validating it: the same row (speed)"
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
    "silvia_client.sessions._history.x_session_path__mutmut_14": (
        "quote(safe='XXXX'): 'X' is a letter, which quote never escapes"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ__init____mutmut_17": (
        "'UTF-8-SIG' for 'utf-8-sig': codec names are case-insensitive"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ__init____mutmut_20": (
        "None for `_after_cr = False`: only tested for truth, and set anew by the first text"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ__init____mutmut_21": (
        "after_cr True at the start: it skips a leading LF, a blank line with nothing pending"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ__init____mutmut_25": (
        "None for `_event = ''`: ServerSentEvent names an event None or '' alike, 'message'"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_32": (
        "None for `_event = ''`: ServerSentEvent names an event None or '' alike, 'message'"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ__init____mutmut_30": (
        "None for `_last_id = ''`: ServerSentEvent makes an id of None ''"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_8": (
        "len * 5 > limit: more lines measured, and the measure decides alone (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_9": (
        "len * 4 >= limit: a line of exactly limit / 4 measured too, the measure decides (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_13": (
        "joins one data line too: the same string (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_36": (
        "`data: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_37": (
        "`data: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_43": (
        "`event: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁ_line__mutmut_44": (
        "`event: ` lines left to the general field branch, which reads them the same (speed)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁfeed__mutmut_40": (
        "joins one line into itself: the same string (memory)"
    ),
    "silvia_client._sse.xǁSSEDecoderǁfeed__mutmut_41": (
        "two lines kept unjoined until the next chunk or the event's end (memory, not output)"
    ),
    "silvia_client.citations._rows.x__read_target__mutmut_2": (
        "isinstance decides alone: a dict is no target value (speed)"
    ),
    "silvia_client.citations._rows.x__reason__mutmut_4": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows.x__reason__mutmut_5": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows.x__reason__mutmut_6": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows.x__reason__mutmut_7": (
        "the input and url of an error are never read, only loc and type"
    ),
    "silvia_client.citations._rows.x__reason__mutmut_11": (
        "a row's error location is one field or none: the joiner never shows"
    ),
    # the retries (`_retries.py`)
    "silvia_client._retries.x_parse_retry_after__mutmut_4": (
        "'RETRY-AFTER' for 'retry-after': httpx.Headers are case-insensitive"
    ),
    # body reading (`_async/_body.py`)
    "silvia_client._async._body.x_encoding_error__mutmut_4": (
        "'CONTENT-ENCODING' for 'content-encoding': httpx.Headers are case-insensitive"
    ),
    "silvia_client._async._body.xǁInflaterǁ__init____mutmut_12": (
        "MAX_WBITS | 17 for | 16: MAX_WBITS is 15, whose low bit is set already (31 either way)"
    ),
    "silvia_client._async._body.xǁInflaterǁfeed__mutmut_12": (
        "None for `_raw_fallback = False`: only tested for truth"
    ),
    "silvia_client._async._body.xǁInflaterǁfeed__mutmut_15": (
        "None for `_raw_fallback = False`: only tested for truth"
    ),
    "silvia_client._async._body.xǁInflaterǁfeed__mutmut_16": (
        "raw fallback left on after a decoded piece: a later piece that fails mid-stream is read "
        "again as raw deflate from a block's start, and fails there too (no input found that "
        "tells them apart: a DecodingError either way)"
    ),
    "silvia_client._async._body.xǁInflaterǁflush__mutmut_1": (
        "flush's error text: `feed` reads every byte given (to an empty unconsumed_tail), so "
        "zlib's flush has nothing left that can fail"
    ),
    "silvia_client._async._body.xǁInflaterǁflush__mutmut_2": (
        "flush's error text: `feed` reads every byte given (to an empty unconsumed_tail), so "
        "zlib's flush has nothing left that can fail"
    ),
    "silvia_client._async._body.x_body_chunks__mutmut_5": (
        "'CONTENT-ENCODING' for 'content-encoding': httpx.Headers are case-insensitive"
    ),
    # The async drain has two bounds, the guard's alarm (which the sync side needs alone) and
    # a cancel scope: a mutant of either leaves the other to end it.
    "silvia_client._async._body.x_drain__mutmut_2": (
        "arms the drain's alarm with no reason: async, the cancel scope still ends the drain"
    ),
    "silvia_client._async._body.x_drain__mutmut_6": (
        "the drain's stop reason is read by no one: the Halt is caught, the guard released"
    ),
    "silvia_client._async._body.x_drain__mutmut_7": (
        "the drain's stop reason is read by no one: the Halt is caught, the guard released"
    ),
    "silvia_client._async._body.x_drain__mutmut_8": (
        "no cancel scope: the guard's alarm still ends the drain (a socket shut down, or the "
        "check between chunks)"
    ),
    "silvia_client._async._body.x_read_at_most__mutmut_12": (
        "at exactly `limit` bytes it reads one chunk more before it stops; it returns "
        "`data[:limit]` either way"
    ),
    # the argument table (`_deadline.py`)
    "silvia_client._deadline.x__fields__mutmut_10": (
        "json.dumps(allow_nan=None): None is false, so NaN is refused as with False"
    ),
    "silvia_client._deadline.x_check__mutmut_16": (
        "'UTF-8' for 'utf-8': codec names are case-insensitive"
    ),
    # the deadline (`_deadline.py`)
    "silvia_client._deadline.xǁHaltǁ__init____mutmut_1": (
        "a Halt's message: every Halt is caught inside the SDK and read by `reason` and `limit`"
    ),
    "silvia_client._deadline.xǁHaltǁ__init____mutmut_2": (
        "a Halt's message: every Halt is caught inside the SDK and read by `reason` and `limit`"
    ),
    "silvia_client._deadline.xǁ_Watchdogǁ_start_over__mutmut_3": (
        "Condition(None) makes an RLock: the watchdog never takes its lock twice, so alike"
    ),
    "silvia_client._deadline.xǁCallǁexpired__mutmut_8": (
        "left() < 0 for <= 0: differs only when the deadline is now to the float, once"
    ),
    "silvia_client._deadline.xǁCallǁwait_between_events__mutmut_3": (
        "left < 0 for <= 0: differs only when the deadline is now to the float, once"
    ),
    "silvia_client._deadline.xǁ_Watchdogǁcall_at__mutmut_10": (
        "len(heap) > 65 for > 64: the two differ at 65 only, which is no multiple of 64"
    ),
    "silvia_client._deadline.xǁ_Watchdogǁ_next__mutmut_4": (
        "an idle wait that timed out ends the thread even with an alarm armed in that instant "
        "(unnotified: its waiter was gone); the next arming starts a thread. No test reaches it"
    ),
    "silvia_client._deadline.xǁ_Watchdogǁ_next__mutmut_15": (
        "wait >= 0 for > 0: at exactly 0 it waits 0 s and looks again, when the alarm is due"
    ),
    # deadline, sessions, turn (session 4)
    "silvia_client._deadline.xǁGuardǁrelease__mutmut_2": (
        "arm(math.inf, None): at math.inf no alarm is set, so its reason is never read"
    ),
    "silvia_client._deadline.xǁGuardǁrelease__mutmut_5": (
        "arm(math.inf, 'XXdeadlineXX'): at math.inf no alarm is set, so its reason is never read"
    ),
    "silvia_client._deadline.xǁLifecycleǁ__init____mutmut_1": (
        "None for `closed = False`: only ever read as a truth value"
    ),
    "silvia_client._deadline.xǁGuardǁwatch__mutmut_8": (
        "get_extra_info of a None stream: the `except Exception` turns that into no socket"
    ),
    "silvia_client._deadline.xǁGuardǁrelease__mutmut_6": (
        "arm(math.inf, 'DEADLINE'): at math.inf no alarm is set, so its reason is never read"
    ),
    "silvia_client._deadline.xǁCallǁtimeouts__mutmut_3": (
        "left < 0 for <= 0: differs only when the deadline is now to the float, once"
    ),
    "silvia_client.chat._turn.xǁ_CopiedOnFirstUseǁ__get____mutmut_6": (
        "cast(None, value) for cast(T, value): `cast` returns its value, whatever the type"
    ),
    "silvia_client.chat._turn.xǁTurnBuilderǁ_text_to__mutmut_2": (
        "pieces <= done: joins the same pieces afresh instead of reusing the join (speed)"
    ),
    # the base URL and token (`_base.py`, session 5)
    "silvia_client._base.x_token_from__mutmut_5": (
        "SILVIA_TOKEN unset read as None, not '': `if not value` takes both as no token"
    ),
    "silvia_client._base.x_token_from__mutmut_7": (
        "SILVIA_TOKEN unset read as None, not '': `if not value` takes both as no token"
    ),
    "silvia_client._base.x_is_local__mutmut_4": (
        "rstrip('XX.XX'): the host is urlsplit's hostname, lower-case, so never ends in 'X'"
    ),
}
