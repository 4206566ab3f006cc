"""Parse floor, ours: the node's own parsers on both files (a COCO results list decoded in
chunks into typed entries), and nothing else: no columns, no matching, no report."""

from __future__ import annotations

import sys

from handler.datasets.cocojson import decode_entries
from handler.datasets.jsondoc import ChunkedArray
from handler.datasets.reading import parse_document
from handler.storage.registry import open_source


def parse(path: str) -> int:
    source = open_source(path)
    document = parse_document(source, source.read_bytes())
    if isinstance(document, ChunkedArray):
        return sum(len(chunk) for chunk in document.decoded(decode_entries))
    return len(document)


if __name__ == "__main__":
    for path in sys.argv[1:3]:
        parse(path)
