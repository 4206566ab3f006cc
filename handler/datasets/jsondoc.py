"""Parse JSON and JSON Lines with errors that name the file, the line and the column."""

from __future__ import annotations

from typing import Any

import orjson

from handler.errors import DatasetError
from handler.storage import Source


def _located(source: Source, error: orjson.JSONDecodeError, line_offset: int = 0) -> DatasetError:
    reason = error.msg.split(":")[0]
    return DatasetError(
        f"{source.name}: line {error.lineno + line_offset} column {error.colno}: "
        f"expected valid JSON ({reason})"
    )


def parse_json(source: Source, content: bytes) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise _located(source, error) from None


def parse_json_lines(source: Source, content: bytes) -> list[Any]:
    """One JSON value per non-blank line."""
    records = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError as error:
            raise _located(source, error, line_offset=number - 1) from None
    return records


def looks_like_json_lines(content: bytes) -> bool:
    """Several top-level values, one per line (a `.jsonl` file), rather than one document."""
    first, _, rest = content.lstrip().partition(b"\n")
    if not first.startswith(b"{") or not rest.strip():
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True
