"""nbgrader's check of every graded cell's metadata, with its schema checked once per process.

Why: nbgrader validates each cell's ``nbgrader`` metadata with ``jsonschema.validate(metadata,
schema)`` (``nbgrader/nbgraderformat/common.py``), and that function first checks the *schema*
against JSON Schema's own metaschema, on every call — jsonschema's documentation says to build
a validator once instead when one schema validates many instances. Grading validates every
cell of every notebook twice (when the submission is sanitised and after it ran): 478 checks for
one full submission's 10 notebooks, 0.75 CPU-s on the 2-core test machine, 0.08 with the
schema checked once (``time.process_time`` around both, 2026-12-07; docs/grading-cost.md).

:func:`install` swaps the module nbgrader calls for :class:`CheckedOnce`: the same validator
class jsonschema would pick, the schema checked once (a bad schema still raises
``SchemaError``), and each cell's metadata validated with it, raising the error
``jsonschema.validate`` raises (its ``best_match``), so no message of nbgrader's changes.
Everything else nbgrader might ask of the module is jsonschema's own.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for


class CheckedOnce:
    """``jsonschema`` as nbgrader's metadata check uses it, ``validate`` building one validator
    per schema (keyed by the schema's JSON text, so an edited schema is checked again)."""

    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}

    def validate(self, instance: Any, schema: dict[str, Any]) -> None:
        """What ``jsonschema.validate(instance, schema)`` does, the schema checked once."""
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            cls = validator_for(schema)
            cls.check_schema(schema)
            validator = self._validators[key] = cls(schema)
        error = best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name: str) -> Any:
        return getattr(jsonschema, name)


def install() -> None:
    """Make nbgrader's metadata check use :class:`CheckedOnce` in this process (idempotent)."""
    from nbgrader.nbgraderformat import common

    if not isinstance(common.jsonschema, CheckedOnce):
        common.jsonschema = CheckedOnce()
