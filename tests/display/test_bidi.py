"""`strip_bidi_controls`, public in `silvia_client.display`: the rule every view applies.

The `silvia` command uses it through this public name; anyone who shows server
text outside the views can too.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import silvia_client.display
from silvia_client.display import strip_bidi_controls

from ..citations.strategies import PROPERTY

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
MARKS = "\u200e\u200f\u061c"  # LRM, RLM, ALM: they open no scope


def test_it_is_a_documented_public_name_of_display() -> None:
    assert "strip_bidi_controls" in silvia_client.display.__all__
    assert strip_bidi_controls.__doc__


@PROPERTY
@given(st.text(st.sampled_from([*CONTROLS, *MARKS, "a", "\u05e9", " ", "\n"]) | st.characters()))
def test_it_drops_every_control_and_nothing_else(text: str) -> None:
    assert strip_bidi_controls(text) == "".join(c for c in text if c not in CONTROLS)


def test_bidi_marks_stay() -> None:
    text = f"\u05e9{MARKS} a"
    assert strip_bidi_controls(f"{CONTROLS}{text}{CONTROLS}") == text
