"""The cleaners, one per medium (`_text`, `qa/report.py`, `cli/_output.py`), over any text.

`terminal_text` escapes every raw control but `\\n` and `\\t` and drops bidi controls;
`xml_text` reads back unchanged through an XML parser; `json_clean` dumps, encodes and reads
back; `carried` is what its encoding writes. Each is idempotent; none is a public name.
"""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from silvia_client._text import terminal_text
from silvia_client.cli._output import carried
from silvia_client.qa.report import json_clean, xml_text

from .citations.strategies import PROPERTY
from .test_public_names import public_modules

HOSTILE = (
    *("\x1b]0;pwned\x07", "\x1b[2J", "\x9b31m", "\x7f", "\u202e", "\u2066", "\ud800", "\udfff"),
    *("\x00", "\x0c", "\ufffe", "\uffff", "\r", "\u2028"),
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
)
texts = st.lists(
    st.one_of(st.text(), st.sampled_from(HOSTILE), st.characters(max_codepoint=0x2070)),
    max_size=12,
).map("".join)

# What must never be written raw to a terminal: C0 but \n and \t, DEL, C1, the line
# and paragraph separators, lone surrogates.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _expected(text: str) -> str:
    """The spec, a character at a time: raw ones escaped, bidi controls dropped, the rest kept."""
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if RAW.fullmatch(c)
        else ("" if c in BIDI_CONTROLS else c)
        for c in text
    )


@PROPERTY  # no deadline: a loaded machine is slow, not wrong
@given(texts)
def test_terminal_text_holds_nothing_raw_and_keeps_the_rest(text: str) -> None:
    cleaned = terminal_text(text)
    assert cleaned == _expected(text)
    assert RAW.search(cleaned) is None
    assert not BIDI_CONTROLS & set(cleaned)
    cleaned.encode("utf-8")  # strict: no lone surrogate left
    assert terminal_text(cleaned) == cleaned


@PROPERTY
@given(texts)
def test_xml_text_reads_back_as_text_and_attribute(text: str) -> None:
    cleaned = xml_text(text)
    assert XML_FORBIDDEN.search(cleaned) is None
    root = ET.Element("r", a=cleaned)
    root.text = cleaned
    parsed = ET.fromstring(ET.tostring(root, encoding="utf-8"))
    assert parsed.get("a") == cleaned
    assert (parsed.text or "") == cleaned
    assert xml_text(cleaned) == cleaned
    if not {"\ufffe", "\uffff"} & set(text):  # else the terminal's: plain text left alone
        assert cleaned == terminal_text(text)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)


@PROPERTY
@given(json_values)
def test_json_clean_dumps_encodes_and_reads_back(value: object) -> None:
    cleaned = json_clean(value)
    dumped = json.dumps(cleaned, ensure_ascii=False)
    dumped.encode("utf-8")
    assert json.loads(dumped) == cleaned
    assert RAW.search(dumped.replace("\n", "")) is None
    assert json_clean(cleaned) == cleaned


@PROPERTY
@given(texts, st.sampled_from(["utf-8", "ascii", "latin-1", None]))
def test_carried_is_what_the_encoding_writes(text: str, encoding: str | None) -> None:
    shown = carried(text, encoding)
    if encoding is None:
        assert shown == text
    else:
        shown.encode(encoding)  # strict
        if all(unicodedata.category(c) != "Cs" for c in text) and encoding == "utf-8":
            assert shown == text


def test_the_cleaners_are_no_public_name() -> None:
    public = {name for module in public_modules() for name in module.__all__}
    assert not {"terminal_text", "xml_text", "json_clean", "carried"} & public
