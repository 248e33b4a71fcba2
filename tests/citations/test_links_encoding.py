"""Account links: `encode_uri_component` and `account_href`, against ECMA-262 and against Node."""

from __future__ import annotations

import json
import random
import shutil
import string
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.citations import InvalidAccountIdError, account_href, encode_uri_component
from silvia_client.errors import SilviaError

from ._links_cases import DOT_SEGMENTS, ID
from .strategies import PROPERTY, lone_surrogate

# --------------------------------------------------------------------------- the reference

UNRESERVED = frozenset(string.ascii_letters + string.digits + "-_.!~*'()")


def reference_encode(value: str) -> str:
    """encodeURIComponent as ECMA-262 defines it, for a string without lone surrogates."""
    return "".join(
        ch if ch in UNRESERVED else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in value
    )


def _split(astral: str) -> str:
    """An astral character as the two UTF-16 code units JavaScript holds it as."""
    code = ord(astral) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


no_surrogates = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
astral = st.characters(min_codepoint=0x10000)


@PROPERTY
@given(no_surrogates)
def test_encode_matches_the_reference_definition(value: str) -> None:
    assert encode_uri_component(value) == reference_encode(value)


@PROPERTY
@given(no_surrogates)
def test_encoded_output_is_ascii_and_decodes_back(value: str) -> None:
    from urllib.parse import unquote

    encoded = encode_uri_component(value)
    assert encoded.isascii()
    assert set(encoded) <= UNRESERVED | set("%0123456789ABCDEF")
    assert unquote(encoded, errors="strict") == value


def test_encode_known_values() -> None:
    for value, expected in [
        ("", ""),
        ("abcXYZ019", "abcXYZ019"),
        ("-_.!~*'()", "-_.!~*'()"),
        (" ", "%20"),
        (
            '/?#[]@:$&+,;=%"<>\\^`{|}',
            "%2F%3F%23%5B%5D%40%3A%24%26%2B%2C%3B%3D%25%22%3C%3E%5C%5E%60%7B%7C%7D",
        ),
        ("é", "%C3%A9"),
        ("\u20ac", "%E2%82%AC"),
        ("😀", "%F0%9F%98%80"),
        ("\x00\x7f", "%00%7F"),
        ("\ufffd", "%EF%BF%BD"),
    ]:
        assert encode_uri_component(value) == expected, (value, expected)


@PROPERTY
@given(no_surrogates, astral, no_surrogates)
def test_a_pair_given_as_two_code_points_encodes_like_the_astral_char(
    before: str, char: str, after: str
) -> None:
    joined = before + char + after
    split = before + _split(char) + after
    assert len(split) == len(joined) + 1
    assert encode_uri_component(split) == encode_uri_component(joined)
    assert encode_uri_component(split) == reference_encode(joined)


@st.composite
def with_lone_surrogate(draw: st.DrawFn) -> str:
    """A string holding a surrogate that no neighbour pairs with."""
    before = draw(no_surrogates)
    after = draw(no_surrogates)
    unit = draw(lone_surrogate())
    return before + unit + after


@PROPERTY
@given(with_lone_surrogate())
def test_lone_surrogate_raises_invalid_account_id(value: str) -> None:
    with pytest.raises(InvalidAccountIdError):
        encode_uri_component(value)
    with pytest.raises(InvalidAccountIdError):
        account_href(value)


def test_lone_surrogate_cases() -> None:
    for units in [
        [0xD800],
        [0xDC00],
        [0x61, 0xDBFF],
        [0xDFFF, 0x7A],
        [0xDC00, 0xD800],
        [0xD800, 0xD800, 0xDC00],
    ]:
        value = "".join(map(chr, units))
        with pytest.raises(InvalidAccountIdError) as info:
            encode_uri_component(value)
        # A clear error of the SDK's tree, and a ValueError for callers that catch that.
        assert isinstance(info.value, SilviaError), units
        assert isinstance(info.value, ValueError), units
        assert str(info.value) == (
            "an account id holds a lone surrogate, which encodeURIComponent rejects"
        ), units


@PROPERTY
@given(no_surrogates.filter(lambda value: value not in DOT_SEGMENTS))
def test_account_href(value: str) -> None:
    assert account_href(value) == "/accounts/" + reference_encode(value)


def test_account_href_examples() -> None:
    assert account_href(ID) == f"/accounts/{ID}"
    assert account_href("a/b") == "/accounts/a%2Fb"
    assert account_href("../x") == "/accounts/..%2Fx"
    assert account_href("...") == "/accounts/..."
    assert account_href("%2e%2e") == "/accounts/%252e%252e"
    assert account_href("x?y#z") == "/accounts/x%3Fy%23z"


def test_dot_segment_ids_have_no_href() -> None:
    for account_id in DOT_SEGMENTS:
        # `/accounts/..` is the site root to a browser, and urljoin drops the segment.
        with pytest.raises(InvalidAccountIdError) as info:
            account_href(account_id)
        assert str(info.value) == (
            "an account id of '.' or '..' would be a dot segment, which leaves /accounts/"
        ), account_id
        assert isinstance(info.value, SilviaError), account_id
        assert isinstance(info.value, ValueError), account_id
        assert encode_uri_component(account_id) == account_id, (
            account_id
        )  # the escaping itself stays exact


# --------------------------------------------------------------------------- against Node


def _corpus(count: int = 4000, seed: int = 20240611) -> list[str]:
    """Strings over every region that matters: ASCII, BMP, astral, surrogates (lone and paired)."""
    rng = random.Random(seed)
    pools = [
        (string.printable, 6),
        ("-_.!~*'()", 2),
        ([chr(c) for c in range(0x80, 0x800)], 2),
        ([chr(c) for c in range(0x800, 0xD800)], 2),
        ([chr(c) for c in range(0xE000, 0x10000)], 2),
        ([chr(c) for c in (0x10000, 0x1F600, 0x10FFFF, 0x2A6D6)], 1),
        ([chr(c) for c in (0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D, 0xDE00)], 2),
    ]
    weights = [w for _, w in pools]
    out = [
        "",
        "\ud83d\ude00",
        "\ude00\ud83d",
        "a\ud83d",
        "\ude00a",
        "\ud83d\ud83d\ude00",
        "\ud83d\ude00\ude00",
        "\U0010ffff",
        "".join(map(chr, range(0x80))),
        ".",
        "..",
        "...",
    ]
    while len(out) < count:
        length = rng.randint(0, 16)
        chars = []
        for _ in range(length):
            pool = rng.choices(pools, weights)[0][0]
            if rng.random() < 0.1:
                chars.append(chr(rng.randint(0, 0x10FFFF)))
            else:
                chars.append(rng.choice(pool))
        out.append("".join(chars))
    return out


_NODE = """
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map((s) => {
  try { return `/accounts/${encodeURIComponent(s)}`; }
  catch (e) { if (e instanceof URIError) return null; throw e; }
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")
def test_account_href_matches_javascript() -> None:
    corpus = _corpus()
    assert any(0xD800 <= ord(c) <= 0xDFFF for s in corpus for c in s)
    node = shutil.which("node")
    assert node is not None
    # json.dumps escapes every non-ASCII code unit, lone surrogates included, and
    # JSON.parse reads "\\ud83d\\ude00" as one astral character, as a server would send it.
    done = subprocess.run(
        [node, "-e", _NODE],
        input=json.dumps(corpus),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected: list[str | None] = json.loads(done.stdout)
    assert len(expected) == len(corpus)
    lone = 0
    mismatches = []
    for value, js in zip(corpus, expected, strict=True):
        try:
            ours: str | None = account_href(value)
        except InvalidAccountIdError:
            ours = None
        if value in DOT_SEGMENTS:  # deliberately no link, where JavaScript would leave the page
            assert ours is None
            continue
        lone += ours is None
        if ours != js:
            mismatches.append((value, ours, js))
    assert not mismatches, mismatches[:10]
    assert 0 < lone < len(corpus)  # both sides of the rule were exercised
