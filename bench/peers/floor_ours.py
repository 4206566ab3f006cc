"""Parse floor, ours: the node's own parsers on both files (a COCO results list read in pieces
by the records kernel into columns), and nothing else: no ids joined, no matching, no report."""

from __future__ import annotations

import sys

from handler.datasets.jsondoc import ArrayText
from handler.datasets.reading import parse_document
from handler.kernels.json_records import Records, records
from handler.storage.registry import open_source


def parse(path: str) -> int:
    source = open_source(path)
    document = parse_document(source, source.read_bytes())
    if isinstance(document, ArrayText):
        pieces = (records(document.piece_text(piece) or b"[]") for piece in document.nominal_pieces())
        return sum(len(read) for read in pieces if isinstance(read, Records))
    return len(document)


if __name__ == "__main__":
    for path in sys.argv[1:3]:
        parse(path)
