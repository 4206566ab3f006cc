"""Parse floor, ours: the node's own parsers on both files (a COCO results list decoded in
pieces into typed entries), and nothing else: no columns, no matching, no report."""

from __future__ import annotations

import sys

from handler.datasets.cocojson import decode_entries
from handler.datasets.jsondoc import ArrayText
from handler.datasets.reading import parse_document
from handler.storage.registry import open_source


def parse(path: str) -> int:
    source = open_source(path)
    document = parse_document(source, source.read_bytes())
    if isinstance(document, ArrayText):
        pieces = (decode_entries(document.piece_text(piece) or b"[]") for piece in document.nominal_pieces())
        return sum(len(entries or ()) for entries in pieces)
    return len(document)


if __name__ == "__main__":
    for path in sys.argv[1:3]:
        parse(path)
