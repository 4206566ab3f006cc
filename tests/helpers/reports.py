"""Publish a report the way the pipeline does, for tests of the store and its readers; read the
texts of a stored JSON part back."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from handler.report.finishers import REPORT_PARTS
from handler.report.publish import staged_report
from handler.storage import Content, Store


def publish_report(
    store: Store, report_id: str, parts: Mapping[str, Content], chunks: Sequence[bytes] | None = None
) -> None:
    """`parts` by their key (`REPORT_PARTS`); `chunks`, if given, are ledger chunks written through the
    report's sinks (in this process) before the publish."""
    with staged_report(store, report_id) as staging:
        sinks = staging.ledger_sinks(len(chunks or ()))
        written = [sink.write(chunk) for sink, chunk in zip(sinks, chunks or (), strict=True)]
        staging.publish({REPORT_PARTS[key]: content for key, content in parts.items()}, written)


def strings_in(document: Any) -> Iterator[str]:
    """Every string of a parsed JSON document (findings.json, routing.json), at any depth."""
    if isinstance(document, str):
        yield document
    elif isinstance(document, dict):
        for item in document.values():
            yield from strings_in(item)
    elif isinstance(document, list):
        for item in document:
            yield from strings_in(item)
