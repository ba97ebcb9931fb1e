"""nbgrader's cell metadata checked against a schema that is itself checked once a process, not once a cell.

nbgrader's ``BaseMetadataValidator.validate_cell`` calls ``jsonschema.validate``, which checks the schema before it
checks the instance: for nbgrader's own, fixed schema file, every graded cell of every notebook, twice a notebook
(0.2 CPU-s of each student's autograde, measured with py-spy). ``install`` gives nbgrader's module a ``validate`` that
checks each schema once and then every instance in full, raising the error ``jsonschema.validate`` raises.
"""
from __future__ import annotations

import functools
import json
import types

import jsonschema
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for


@functools.lru_cache(maxsize=8)
def _validator(schema_text: str) -> jsonschema.protocols.Validator:
    """A validator of the schema (JSON text), the schema itself checked first (SchemaError if it is wrong)."""
    schema = json.loads(schema_text)
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(instance, schema: dict) -> None:
    """``jsonschema.validate(instance, schema)``, with the schema's own check done once for each schema."""
    # (the keys in their order: it decides which of several errors best_match names, as in jsonschema.validate)
    error = best_match(_validator(json.dumps(schema)).iter_errors(instance))
    if error is not None:
        raise error


def install() -> None:
    """nbgrader's metadata validators in this process (CheckCellMetadata's among them) use ``validate`` from now on."""
    from nbgrader.nbgraderformat import common

    common.jsonschema = types.SimpleNamespace(validate=validate)  # the only name it uses (nbgrader 0.9)
