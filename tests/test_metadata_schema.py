"""nbgrader's cell-metadata check with its schema checked once
(autograder/grading/metadata_schema.py): the same verdict and the same message as
``jsonschema.validate`` for every cell, good or bad, and the metaschema check paid once per
process instead of once per cell."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
from jsonschema.exceptions import SchemaError, ValidationError
from nbformat.v4 import new_code_cell
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.nbgraderformat import common as nbgrader_common

from autograder.grading import metadata_schema

ROOT = Path(__file__).resolve().parents[1]
GOOD = {"schema_version": 3, "grade": True, "locked": True, "solution": False, "task": False,
        "grade_id": "tiled_gemm_correct_visible", "points": 3,
        "checksum": "0123456789abcdef0123456789abcdef", "cell_type": "code"}
#: metadata a copied, hand-edited or damaged notebook can carry: each must fail as before
BAD = [
    {k: v for k, v in GOOD.items() if k != "grade"},     # a required key gone
    {**GOOD, "grade": "yes"},                             # a wrong type
    {**GOOD, "points": -1},                               # below the minimum
    {**GOOD, "grade_id": "has spaces!"},                  # outside the pattern
    {**GOOD, "checksum": "short"},                        # too short
    {**GOOD, "cell_type": "heading"},                     # not one of the enum
    {**GOOD, "favourite": 1},                             # a key the schema does not allow
    {**GOOD, "schema_version": 3.5, "points": "3"},       # two problems: the same one named
    [],                                                   # not an object at all
]


def _outcome(validate, instance, schema):
    try:
        validate(instance, schema)
    except ValidationError as exc:
        return ("invalid", exc.message, list(exc.absolute_path), exc.validator)
    return ("valid",)


@pytest.mark.parametrize("instance", [GOOD, {k: GOOD[k] for k in
                                               ("schema_version", "grade", "locked", "solution")},
                                      *BAD], ids=lambda v: str(v)[:40])
def test_the_verdict_and_message_are_jsonschemas(instance) -> None:
    schema = MetadataValidator().schema
    checked = metadata_schema.CheckedOnce()
    assert _outcome(checked.validate, copy.deepcopy(instance), schema) == \
        _outcome(jsonschema.validate, copy.deepcopy(instance), schema)


def test_the_metaschema_is_checked_once_for_many_cells(monkeypatch) -> None:
    schema = MetadataValidator().schema
    cls = jsonschema.validators.validator_for(schema)
    calls = []
    real = cls.check_schema.__func__
    monkeypatch.setattr(cls, "check_schema", classmethod(
        lambda c, s, *a, **k: (calls.append(1), real(c, s, *a, **k))[1]))
    checked = metadata_schema.CheckedOnce()
    for _ in range(50):
        checked.validate(GOOD, schema)
    assert len(calls) == 1
    jsonschema.validate(GOOD, schema)  # what nbgrader called: a check on every call
    assert len(calls) == 2


def test_a_bad_schema_is_still_refused() -> None:
    with pytest.raises(SchemaError):
        metadata_schema.CheckedOnce().validate({}, {"type": 12})


def test_an_edited_schema_is_checked_again() -> None:
    checked = metadata_schema.CheckedOnce()
    schema = {"type": "object", "required": ["a"]}
    checked.validate({"a": 1}, schema)
    with pytest.raises(ValidationError, match="'b' is a required property"):
        checked.validate({"a": 1}, {**schema, "required": ["b"]})


def test_the_course_configuration_installs_it_for_nbgraders_check(monkeypatch) -> None:
    """Every nbgrader process reads nbgrader_config.py, which calls configure(): from then on
    nbgrader's own metadata check (CheckCellMetadata, validate_nb) goes through CheckedOnce
    and still refuses bad metadata with jsonschema's error."""
    from traitlets.config import Config

    from autograder.grading.config import configure

    monkeypatch.setattr(nbgrader_common, "jsonschema", jsonschema)
    from autograder.sandbox import bwrap

    monkeypatch.setenv("JUPYTER_PATH", "")  # configure() sets both: put back afterwards
    monkeypatch.setenv(bwrap.ROOT_ENV, "")
    configure(Config(), ROOT)
    assert isinstance(nbgrader_common.jsonschema, metadata_schema.CheckedOnce)
    validator = MetadataValidator()
    cell = new_code_cell("x = 1", metadata={"nbgrader": dict(GOOD)})
    validator.validate_cell(cell)
    cell.metadata["nbgrader"]["grade"] = "yes"
    with pytest.raises(ValidationError, match="'yes' is not of type 'boolean'"):
        validator.validate_cell(cell)
    metadata_schema.install()  # a second configure() keeps the one validator cache
    assert isinstance(nbgrader_common.jsonschema, metadata_schema.CheckedOnce)
