"""How to read one side when its files do not say it (issue 18): class names and column layout.

`--gt-names FILE` / `--pred-names FILE` (a `.names` / `classes.txt` list, a `data.yaml`, or a
COCO file's `categories`) name the class ids of a side; `--gt-layout` / `--pred-layout` give
the column order of its text label files. They are not node inputs (node.json stays the
platform's): an inputs file may carry them as GT_NAMES, PRED_NAMES, GT_LAYOUT, PRED_LAYOUT.
This module declares them once; the CLIs, the inputs and the messages read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from handler.datasets.layouts import Layout, parse_layout
from handler.datasets.names import parse_names
from handler.errors import DatasetError, InputError, quoted

Side = Literal["gt", "pred"]
SIDES: Final[tuple[Side, ...]] = ("gt", "pred")
# Key → what it is, for --help; each key is also an option: GT_NAMES is --gt-names.
READ_KEYS: Final = {
    "GT_NAMES": "class names of the GT's ids: a .names/classes.txt list, a data.yaml, or a COCO file",
    "PRED_NAMES": "class names of the predictions' ids: a .names/classes.txt list, a data.yaml, or a COCO "
    "file",
    "GT_LAYOUT": 'column order of the GT\'s text label lines, e.g. "class x y w h" (frame detected, or add '
    "normalized / pixels)",
    "PRED_LAYOUT": 'column order of the predictions\' text label lines, e.g. "class score cx cy w h"',
    "PRED_MODEL_VERSION": "the model version whose predictions to read, in a Label Studio export",
}


def option_flag(key: str) -> str:
    """GT_NAMES → --gt-names."""
    return "--" + key.lower().replace("_", "-")


def option_label(key: str) -> str:
    """How messages name a read option: both spellings, since either may have been used."""
    return f"{option_flag(key)} FILE ({key})" if key.endswith("NAMES") else f"{option_flag(key)} ({key})"


@dataclass(frozen=True)
class ClassNames:
    """Class id → name, and where it came from (for messages)."""

    by_id: dict[int, str]  # id i: line i of a list, the i-th category of a COCO file
    source: str
    category_ids: dict[int, str] | None = None  # a COCO file's own category ids (for a results list)


@dataclass(frozen=True)
class ReadOptions:
    """What a side's reader is told: names of its class ids, the column layout of its lines,
    the model version whose predictions to read."""

    side: Side = "gt"
    names: ClassNames | None = None
    layout: Layout | None = None
    model_version: str | None = None

    def given(self) -> list[str]:
        """The keys of the options given (GT_NAMES, PRED_LAYOUT, ...)."""
        values = (("NAMES", self.names), ("LAYOUT", self.layout), ("MODEL_VERSION", self.model_version))
        return [f"{self.side.upper()}_{what}" for what, value in values if value]

    def refuse(self, format_name: str, takes: frozenset[str]) -> None:
        """An option the format cannot apply is an error naming it, never silently ignored."""
        for key in self.given():
            if key.split("_", 1)[1].lower() not in takes:
                where = _APPLIES_TO[key.split("_", 1)[1]]
                raise InputError(
                    f"{option_label(key)}: the {format_name} format has no use for it: it applies to {where}"
                )


NO_OPTIONS: Final = ReadOptions()
# What each read option applies to, for the message refusing it elsewhere.
_APPLIES_TO: Final = {
    "NAMES": "yolo, cartucho and coco-results, whose classes are ids",
    "LAYOUT": "yolo and cartucho text label files",
    "MODEL_VERSION": "label-studio JSON exports, which may hold several models' predictions",
}


def checked_layout(key: str, text: str) -> Layout:
    """The layout of a GT_LAYOUT / PRED_LAYOUT value; an error names the key and the option."""
    try:
        return parse_layout(text)
    except ValueError as error:
        raise InputError(f"{option_label(key)}: {error}") from None


def _coco_categories(where: str, document: Any) -> dict[int, str]:
    categories = document.get("categories") if isinstance(document, dict) else None
    if not isinstance(categories, list) or not all(
        isinstance(c, dict) and isinstance(c.get("id"), int) and isinstance(c.get("name"), str)
        for c in categories
    ):
        raise DatasetError(f"{where}: expected a COCO file with `categories` of {{id, name}}")
    return {category["id"]: category["name"] for category in categories}


def parse_names_file(key: str, where: str, content: bytes) -> ClassNames:
    """The names of a GT_NAMES / PRED_NAMES file: id → name; every error names the key."""
    try:
        if where.lower().endswith(".json"):
            try:
                document = orjson.loads(content)
            except orjson.JSONDecodeError as error:
                raise DatasetError(f"{where}: expected a COCO JSON file ({error})") from None
            categories = _coco_categories(where, document)
            by_id = dict(enumerate(categories.values()))
        else:
            categories, by_id = None, parse_names(where, content.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{option_label(key)}: {where}: expected UTF-8 text") from None
    except DatasetError as error:
        raise InputError(f"{option_label(key)}: {error}") from None
    if not by_id:
        raise InputError(f"{option_label(key)}: {where}: no class names in it")
    # A class id of a label file indexes the categories in their order (a model trained on the
    # COCO file counts from 0); a results list's category_id is the category's own id.
    return ClassNames(by_id, f"{quoted(where)} ({option_label(key)})", categories)
