"""`schemas/findings.schema.json`, generated from the `Findings` model.

    python -m handler.report.findings.schema           # print the schema
    python -m handler.report.findings.schema --write   # rewrite schemas/findings.schema.json

tests/report/test_schema_drift.py fails when the checked-in file is not what this prints.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

import orjson
from pydantic.json_schema import GenerateJsonSchema

from handler.report.findings.model import Findings
from handler.resources import resource_path

SCHEMA_FILE: Final = "schemas/findings.schema.json"
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID: Final = "https://prelabel.local/schemas/findings.schema.json"


class _UntitledFields(GenerateJsonSchema):
    """Field titles only repeat the key; a model keeps its title, which names its `$defs` entry."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def findings_schema() -> dict[str, Any]:
    generated = Findings.model_json_schema(mode="serialization", schema_generator=_UntitledFields)
    return {"$schema": DIALECT, "$id": SCHEMA_ID, **generated}


def schema_text() -> str:
    return orjson.dumps(findings_schema(), option=orjson.OPT_INDENT_2).decode() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m handler.report.findings.schema", description="Findings schema."
    )
    parser.add_argument("--write", action="store_true", help=f"rewrite {SCHEMA_FILE} instead of printing")
    args = parser.parse_args(argv)
    if args.write:
        resource_path(SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")
    else:
        print(schema_text(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
