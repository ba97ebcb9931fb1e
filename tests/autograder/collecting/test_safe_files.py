"""How names reach a person: readable, never able to rewrite the screen or reorder the line they are on."""
from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from autograder.collecting.safe_files import BIDI_CONTROLS, SHOWN_CHARS, shown

SCIENTIST = "👩\u200d🔬"  # woman + U+200D (zero width joiner, a format character) + microscope: one emoji


def test_an_emoji_joined_by_u200d_is_shown_whole():
    """Is an id made of emoji joined by U+200D (and one with a space, accents, CJK) shown exactly as it is?"""
    for name in (SCIENTIST, f"ada {SCIENTIST}", "Ana María", "李雷", "e\u0301"):
        assert shown(name) == name


def test_bidi_controls_and_control_characters_are_neutralised():
    """Are the bidi overrides and isolates, an escape sequence, a newline and a lone surrogate each shown as '?'?"""
    assert shown("ab\u202ecd") == "ab?cd" and shown("a\u2066b\u2069") == "a?b?"
    assert shown("\x1b[2Jgrade=100") == "?[2Jgrade=100" and shown("bad\nname") == "bad?name"
    assert shown("x\udc80") == "x?"


@given(st.text())
def test_what_is_shown_is_short_and_cannot_steer_a_terminal(name):
    """Whatever a name holds, is what is shown at most 80 characters, with no control character, no bidi control,
    no line break and no surrogate?"""
    text = shown(name)
    assert len(text) <= SHOWN_CHARS
    for c in text:
        assert c not in BIDI_CONTROLS and not 0xD800 <= ord(c) <= 0xDFFF
        assert unicodedata.category(c) not in ("Cc", "Zl", "Zp"), repr(c)


@given(st.text(st.characters(categories=["L", "M", "N", "P", "S", "Zs", "Cf"], exclude_characters=BIDI_CONTROLS),
               max_size=SHOWN_CHARS))
def test_readable_names_are_shown_as_they_are(name):
    """Is a name of letters, marks, digits, punctuation, symbols, spaces and non-bidi format characters (up to 80 of
    them) shown exactly as it is?"""
    assert shown(name) == name
