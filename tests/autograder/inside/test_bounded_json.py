"""JSON a student wrote, parsed within a budget of values: a bomb of empty objects costs no more than its budget."""
from __future__ import annotations

import json

import pytest
import unit_work
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.inside import bounded_json, wire
from autograder.units.limits import UnitLimits
from autograder.units.unit import run_unit


def test_values_are_counted_as_json_holds_them():
    """Does the count see every value (keys, strings with escaped quotes, numbers, literals, containers)?"""
    assert bounded_json.count_values(b'{"a": [1, 2.5e3, "x\\"y", null, true, {}]}', 100) == 9
    assert bounded_json.loads(b'{"a": [1, "x\\"y"]}') == {"a": [1, 'x"y']}


# JSON documents whose strings hold the bytes the quick count looks for (commas, colons, brackets), escapes too
_TEXT = st.text(st.sampled_from(list(',:[]{}"\\ aé\n')), max_size=12)
_DOCUMENTS = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
                          lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_TEXT, inner, max_size=6),
                          max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_DOCUMENTS, st.integers(-3, 3), st.booleans())
def test_the_quick_count_decides_as_the_full_count_does(document, offset, indent):
    """For any JSON document (strings full of commas, colons and brackets included) and a budget around its count,
    does ``within`` (which skips the full count when those bytes are few) accept exactly what the full count
    accepts?"""
    data = json.dumps(document, indent=2 if indent else None, ensure_ascii=False).encode("utf-8")
    count = bounded_json.count_values(data, 10 ** 9)
    limit = max(0, count + offset)
    assert bounded_json.within(data, limit) == (bounded_json.count_values(data, limit) is not None) == (count <= limit)


def test_a_bomb_of_empty_objects_is_refused_before_it_is_built():
    """Is 48 MB of empty objects (2.6 GB once built by json) refused without being parsed?"""
    with pytest.raises(bounded_json.JsonRefused, match="more than 1,000,000 JSON values"):
        bounded_json.loads(b"[" + b",".join([b"{}"] * 16_000_000) + b"]")


@pytest.mark.parametrize("data, reason", [(b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
                                          (b'{"a": ', "not valid JSON"), (b"\xff\xfe", "not UTF-8")])
def test_each_malformed_document_has_its_reason(data, reason):
    """Are deep nesting, broken JSON and bytes that are not UTF-8 each refused with a reason, never a crash?"""
    with pytest.raises(bounded_json.JsonRefused, match=reason):
        bounded_json.loads(data)


def test_unclosed_strings_are_counted_in_one_pass():
    """Is a document of five million escaped quotes in an unclosed string counted (each place scanned once: a
    quadratic scan would not finish)?"""
    assert bounded_json.count_values(b'"' + b'\\"' * 5_000_000, 10) == 1


def test_a_jobs_answer_of_empty_objects_stays_within_a_small_memory():
    """Does the grader's parse of a job's answer of 48 MB of empty objects (2.6 GB before) fail as a malformed answer
    within a few hundred MB, in a unit of its own?"""
    outcome = run_unit(unit_work.parse_answer, (b"[" + b",".join([b"{}"] * 24_000_000) + b"]",),
                       UnitLimits(memory_mb=3072))
    assert outcome.ok and outcome.value.startswith("refused"), outcome
    assert outcome.peak_mb < 500, outcome.peak_mb
    with pytest.raises(wire.WireError):
        wire.loads(b"[" + b",".join([b"{}"] * 1_100_000) + b"]")
