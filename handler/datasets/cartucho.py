"""Text labels in pixels, as Cartucho/mAP reads them: one `.txt` per image, a line
`<class> [<confidence>] <left> <top> <right> <bottom> [difficult]`.

The class is a name (it may contain spaces), or an id when the folder has a names file
(review_object_detection_metrics' `cls_id score x1 y1 x2 y2`). Pure parsers only.
"""

from __future__ import annotations

from handler.datasets.labels import Row, TextLabels, first_tokens, number, numbers, parse_lines

EXPECTED = "expected `<class> [<confidence>] <left> <top> <right> <bottom> [difficult]`"
DIFFICULT = "difficult"


def _trailing_numbers(tokens: list[str], most: int) -> int:
    count = 0
    while count < min(most, len(tokens)) and number(tokens[-1 - count]) is not None:
        count += 1
    return count


def parse_cartucho_line(tokens: list[str]) -> Row | str:
    difficult = tokens[-1] == DIFFICULT
    body = tokens[:-1] if difficult else tokens
    trailing = _trailing_numbers(body, 5)
    if trailing < 4 or len(body) < 5:
        return EXPECTED
    # Five numbers after a class: the first is the confidence (Cartucho's detection-results).
    has_confidence = trailing == 5 and len(body) > 5
    values = numbers(body[-5:] if has_confidence else body[-4:])
    if isinstance(values, str):
        return values
    x_min, y_min, x_max, y_max = values[-4:]
    return Row(
        class_token=" ".join(body[: -len(values)]),
        xyxy=(x_min, y_min, x_max, y_max),
        confidence=values[0] if has_confidence else None,
        difficult=difficult,
    )


def parse_cartucho(text: str) -> TextLabels:
    return parse_lines(text, parse_cartucho_line)


def is_cartucho_label_file(text: str) -> bool:
    """A label file's first line ends in a number; an empty file is an image with no boxes."""
    tokens = first_tokens(text)
    if tokens is None:
        return True
    body = tokens[:-1] if tokens[-1] == DIFFICULT else tokens
    return len(body) >= 2 and number(body[-1]) is not None


def looks_like_cartucho(text: str) -> bool:
    """The first line is a Cartucho line; a line of numbers only has 5 or 6 of them (an id, an
    optional confidence and a box): more are corners (YOLO OBB, DOTA), not a class named by numbers."""
    tokens = first_tokens(text)
    if tokens is None or not isinstance(parse_cartucho_line(tokens), Row):
        return False
    return len(tokens) in (5, 6) or any(number(token) is None for token in tokens)
