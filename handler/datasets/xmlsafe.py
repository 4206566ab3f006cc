"""XML from users, parsed by the standard library's expat with one guard: no document type
declaration. Entities can only be declared in one, so none is declared, none expanded (no
"billion laughs", no external entity fetched); the tools whose XML is read (CVAT, Pascal VOC
writers) never write one. Checked before parsing, on the prolog only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Final

from handler.errors import DatasetError

# What may come before the root element: a BOM, the XML declaration, comments, instructions.
_PROLOG: Final = re.compile(rb"(?:\xef\xbb\xbf)?(?:\s+|<\?.*?\?>|<!--.*?-->)*", re.DOTALL)
# A document type declaration, with an internal subset in brackets or none.
_DOCTYPE: Final = re.compile(rb"<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>\s*", re.DOTALL)
# The prolog is looked for in this much of the file, at most.
PROLOG_BYTES: Final = 1 << 16


def root_start(content: bytes) -> int:
    """Where the first element starts (past any document type declaration)."""
    head = content[:PROLOG_BYTES]
    prolog = _PROLOG.match(head)
    start = prolog.end() if prolog else 0
    doctype = _DOCTYPE.match(head, start)
    return doctype.end() if doctype else start


def refuse_doctype(where: str, content: bytes) -> None:
    head = content[:PROLOG_BYTES]
    prolog = _PROLOG.match(head)
    if head.startswith(b"<!DOCTYPE", prolog.end() if prolog else 0):
        raise DatasetError(f"{where}: a document type declaration: refused (entities are not read)")


# What the XML parser raises on a damaged or undecodable document: its own errors, and those of
# the encoding its declaration names (unknown: LookupError; bytes not in it, or a multi-byte one
# expat cannot take: ValueError).
XML_ERRORS: Final = (ET.ParseError, LookupError, ValueError)


def xml_refusal(where: str, error: Exception) -> DatasetError:
    """The one line for an XML document the parser refused: where, and what was expected."""
    if isinstance(error, ET.ParseError):
        line, column = error.position
        reason = str(error).split(":")[0]
        return DatasetError(f"{where}: line {line} column {column + 1}: expected well-formed XML ({reason})")
    return DatasetError(
        f"{where}: expected XML in an encoding its declaration names and Python knows ({error})"
    )


def has_root(content: bytes, tag: str) -> bool:
    """Whether the document's first element is `<tag>` (`<annotation>` is not `<annotations>`)."""
    return (
        re.compile(rb"<" + re.escape(tag.encode()) + rb"[\s>/]").match(content, root_start(content))
        is not None
    )
