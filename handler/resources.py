"""Files that ship with the node: node.json, schemas/ and report_templates/.

In a wheel they live in `handler/_data/`; in a checkout they are at the project's top level.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import jsonschema

_PACKAGE = Path(__file__).resolve().parent


def resource_path(relative: str) -> Path:
    installed = _PACKAGE / "_data" / relative
    return installed if installed.exists() else _PACKAGE.parent / relative


@cache
def load_json_resource(relative: str) -> Any:
    return orjson.loads(resource_path(relative).read_bytes())


def node_config() -> dict[str, Any]:
    config: dict[str, Any] = load_json_resource("node.json")
    return config


@cache
def schema_validator(name: str, definition: str | None = None) -> jsonschema.protocols.Validator:
    """A validator for `schemas/<name>`, or for one of its `$defs` (references still resolve)."""
    import jsonschema  # only a run that validates pays for its import: not the builder's limits

    schema = load_json_resource(f"schemas/{name}")
    target = schema if definition is None else {"$ref": f"#/$defs/{definition}", **{"$defs": schema["$defs"]}}
    cls = jsonschema.validators.validator_for(schema)
    validator: jsonschema.protocols.Validator = cls(target)
    return validator
