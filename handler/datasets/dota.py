"""DOTA labelTxt: one `.txt` per image, a line `x1 y1 x2 y2 x3 y3 x4 y4 class difficult` of
four corners in pixels (DOTA-v1.0 files may start with `imagesource:` and `gsd:` lines).

Each line's corners become the rectangle holding them (the builder: `ParsedRows.corners`);
`difficult` 1 is kept and flagged, as VOC's. Pure
parsers only: the folder around them is read by `textfolder`.
"""

from __future__ import annotations

import re
from typing import Final

from handler.datasets.labels import Row, TextLabels, first_tokens, number, numbers, parse_lines
from handler.datasets.yolo_obb import quad_row

EXPECTED: Final = "expected `x1 y1 x2 y2 x3 y3 x4 y4 class [difficult]`"
# DOTA-v1.0's header lines: the image's source and its ground sample distance.
_HEADER: Final = re.compile(r"^(imagesource|gsd):", re.IGNORECASE)


def parse_dota_line(tokens: list[str]) -> Row | str:
    if len(tokens) not in (9, 10):
        return f"{EXPECTED}, got {len(tokens)} values"
    corners = numbers(tokens[:8])
    if isinstance(corners, str):
        return f"{EXPECTED}: {corners}"
    if number(tokens[8]) is not None:
        return f"{EXPECTED}: the class is a name, not the number {tokens[8]}"
    if len(tokens) == 10 and tokens[9] not in ("0", "1"):
        return f"{EXPECTED}: difficult is 0 or 1, not {tokens[9]}"
    return quad_row(tokens[8], corners, None, difficult=len(tokens) == 10 and tokens[9] == "1")


def dota_label_lines(text: str) -> str:
    """The text without its header lines (blank lines keep every line's number)."""
    return "\n".join("" if _HEADER.match(line) else line for line in text.splitlines())


def parse_dota(text: str) -> TextLabels:
    return parse_lines(dota_label_lines(text), parse_dota_line)


def is_dota_label_file(text: str) -> bool:
    """A label file's first line (after its header) starts with a number; an empty file is an
    image with no boxes, and so is a file of header lines only."""
    tokens = first_tokens(dota_label_lines(text))
    return tokens is None or number(tokens[0]) is not None


def looks_like_dota(text: str) -> bool:
    tokens = first_tokens(dota_label_lines(text))
    return tokens is not None and not isinstance(parse_dota_line(tokens), str)
