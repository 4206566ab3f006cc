"""Findings documents against the checked-in schemas/findings.schema.json, as the widget reads them."""

from __future__ import annotations

from typing import Any

import jsonschema

from handler.resources import schema_validator

SCHEMA = "findings.schema.json"


def validate_document(document: Any) -> None:
    """Raise ValueError naming the first mismatch of `document` with the checked-in schema."""
    error = jsonschema.exceptions.best_match(schema_validator(SCHEMA).iter_errors(document))
    if error is not None:
        raise ValueError(f"findings do not match {SCHEMA}: {error.message} at {list(error.path)}")
