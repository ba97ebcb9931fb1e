"""nbgrader's cell metadata checked against a schema checked once a process."""
from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import CheckCellMetadata

from autograder.nbgrader_glue import schema_once

SCHEMA = MetadataValidator().schema
GOOD = {"grade": True, "solution": False, "locked": True, "schema_version": 3, "grade_id": "03-span-public",
        "points": 5, "task": False}
# a value of every JSON kind, for any field of the metadata
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _raised(validate, instance, schema=SCHEMA):
    """What ``validate`` raised (its type, message, path and schema path), or None."""
    try:
        validate(instance, schema)
    except jsonschema.exceptions._Error as err:  # ValidationError and SchemaError alike
        return type(err), err.message, list(err.path), list(err.schema_path)
    return None


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(sorted(set(GOOD) | {"extra"})), value=VALUES)
def test_a_cell_is_refused_for_what_jsonschema_refuses_it_for(field, value):
    """Does the once-checked validate accept what ``jsonschema.validate`` accepts, and refuse the rest with the same
    error (type, message and path), for every field of a graded cell given a value of any JSON kind?"""
    instance = {**GOOD, field: value}
    assert _raised(schema_once.validate, instance) == _raised(jsonschema.validate, instance)


def test_a_wrong_schema_is_still_refused():
    """Is a schema that is not a schema still refused, as ``jsonschema.validate`` refuses it?"""
    wrong = {"type": 12}
    assert _raised(schema_once.validate, {}, wrong) == _raised(jsonschema.validate, {}, wrong) is not None


def test_nbgraders_metadata_check_checks_the_schema_once_and_every_cell(monkeypatch):
    """Once installed, does nbgrader's CheckCellMetadata check its schema once for many notebooks, pass good cells and
    still refuse a notebook whose metadata is corrupted?"""
    from nbgrader.nbgraderformat import common

    monkeypatch.setattr(common, "jsonschema", common.jsonschema)  # put back after the test
    schema_once._validator.cache_clear()
    schema_once.install()
    checked = []
    real = jsonschema.Draft4Validator.check_schema
    monkeypatch.setattr(jsonschema.Draft4Validator, "check_schema", classmethod(
        lambda cls, schema, **kw: checked.append(1) or real.__func__(cls, schema, **kw)))
    good = new_notebook(cells=[new_code_cell("x = 1", metadata={"nbgrader": dict(GOOD, grade_id=f"g{i}")})
                               for i in range(5)])
    for _ in range(3):
        CheckCellMetadata().preprocess(good, {})
    assert len(checked) == 1
    bad = new_notebook(cells=[new_code_cell("x = 1", metadata={"nbgrader": dict(GOOD, points="five")})])
    with pytest.raises(ValidationError):
        CheckCellMetadata().preprocess(bad, {})
