"""How to read one side when its files do not say it: class names and column layout,
and which model's predictions a Label Studio export gives.

`--gt-names FILE` / `--pred-names FILE` (a `.names` / `classes.txt` list, a `data.yaml`, or a
COCO file's `categories`) name the class ids of a side; `--gt-layout` / `--pred-layout` give
the column order of its text label files. They are not node inputs (node.json stays the
platform's): an inputs file may carry them as GT_NAMES, PRED_NAMES, GT_LAYOUT, PRED_LAYOUT.
This module declares them once (`READ_OPTIONS`); the CLIs, the inputs, `open_side` and the
messages read them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import msgspec
import orjson

from handler.boxes import BOX_OPTIONS
from handler.datasets.layouts import Layout, parse_layout
from handler.datasets.names import parse_names
from handler.errors import DatasetError, InputError, StorageError, quoted
from handler.storage import open_source

Side = Literal["gt", "pred"]
SIDES: Final[tuple[Side, ...]] = ("gt", "pred")


class ReadOption(msgspec.Struct, frozen=True):
    """One option of how a side is read, declared once for both sides; `READ_OPTIONS` lists them.

    `field` names it everywhere: the keys GT_<FIELD> / PRED_<FIELD> of an inputs file, the
    options --gt-<field> / --pred-<field>, and the field of `side.SideSpec` (what was given)
    and of `ReadOptions` (what the reader is told) that holds its value. `parse` turns the text
    given into that value when the inputs are parsed (a ValueError says what was expected);
    `open`, for an option that names a file, reads it when the side is opened (`open_side`).
    `applies_to` says which readers use it: a format that does not take it (`Format.takes`)
    refuses it, naming it. `metavar` FILE marks an option that names a file (messages say so).
    """

    field: str
    metavar: str
    help: Mapping[Side, str]
    applies_to: str
    parse: Callable[[str], Any]
    open: Callable[[str, Any], Any] | None = None  # (key, parsed value) -> the value read
    # Another reading of the rows read: applied after any reader, by `handler.readings.sides`.
    rereads: bool = False

    def key(self, side: Side) -> str:
        return f"{side.upper()}_{self.field.upper()}"

    def checked(self, side: Side, text: str) -> Any:
        """The value of `text`; an error is an InputError naming the key and the option."""
        try:
            return self.parse(text)
        except ValueError as error:
            raise InputError(f"{option_label(self.key(side))}: {error}") from None

    def opened(self, side: Side, value: Any) -> Any:
        """What the reader is told: `open`'s reading of the value, else the value itself."""
        return value if self.open is None or value is None else self.open(self.key(side), value)


def _file_reference(text: str) -> str:
    if not text:
        raise ValueError("expected a file: a path or an s3:// URI")
    return text


def _model_version(text: str) -> str:
    if not text:
        raise ValueError("expected a model version, as the export's predictions name it")
    return text


def option_flag(key: str) -> str:
    """GT_NAMES → --gt-names."""
    return "--" + key.lower().replace("_", "-")


def option_label(key: str) -> str:
    """How messages name a read option: both spellings, since either may have been used."""
    file_option = any(o.metavar == "FILE" and key == o.key(side) for o in READ_OPTIONS for side in SIDES)
    return f"{option_flag(key)} FILE ({key})" if file_option else f"{option_flag(key)} ({key})"


class ClassNames(msgspec.Struct, frozen=True):
    """Class id → name, and where it came from (for messages)."""

    by_id: dict[int, str]  # id i: line i of a list, the i-th category of a COCO file
    source: str
    category_ids: dict[int, str] | None = None  # a COCO file's own category ids (for a results list)


class ReadOptions(msgspec.Struct, frozen=True):
    """What a side's reader is told: names of its class ids, the column layout of its lines.

    One field per `ReadOption` (of the same name), None when not given.
    """

    side: Side = "gt"
    names: ClassNames | None = None
    layout: Layout | None = None
    model_version: str | None = None
    box: str | None = None
    frame: str | None = None
    class_map: dict[str, str] | None = None  # class as written → GT class, read from the file
    score: str | None = None
    mask: str | None = None

    def given(self) -> list[ReadOption]:
        """The options given, in `READ_OPTIONS` order."""
        return [option for option in READ_OPTIONS if getattr(self, option.field) is not None]

    def refuse(self, format_name: str, takes: frozenset[str]) -> None:
        """An option the format cannot apply is an error naming it, never silently ignored."""
        for option in self.given():
            if option.field not in takes and not option.rereads:
                raise InputError(
                    f"{option_label(option.key(self.side))}: the {format_name} format has no use for it: "
                    f"it applies to {option.applies_to}"
                )


NO_OPTIONS: Final = ReadOptions()


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


def _option_file(key: str, reference: str) -> bytes:
    """The content of the file a read option names (a path or a URI); an error names the option."""
    source = open_source(reference, option_label(key))  # a path the OS refuses: one line naming the option
    try:
        return source.read_bytes()
    except (StorageError, OSError) as error:
        raise InputError(f"{option_label(key)}: {quoted(reference)}: cannot read it ({error})") from None


def read_names_file(key: str, reference: str) -> ClassNames:
    """The names of the GT_NAMES / PRED_NAMES file at `reference` (a path or a URI)."""
    return parse_names_file(key, reference, _option_file(key, reference))


def parse_class_map(where: str, content: bytes) -> dict[str, str]:
    """A class map file: a JSON object of class as written → GT class (ValueError says what is wrong)."""
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"{where}: expected a JSON object of class → GT class ({error})") from None
    if not isinstance(document, dict) or not all(
        isinstance(value, str) and value for value in document.values()
    ):
        raise ValueError(f"{where}: expected a JSON object of class as written → GT class name (strings)")
    return {str(key): value for key, value in document.items()}


def read_class_map_file(key: str, reference: str) -> dict[str, str]:
    """The map of the GT_CLASS_MAP / PRED_CLASS_MAP file at `reference`; an error names the option."""
    content = _option_file(key, reference)  # its InputError names the option already
    try:
        return parse_class_map(reference, content)
    except ValueError as error:
        raise InputError(f"{option_label(key)}: {error}") from None


def _box_kind(text: str) -> str:
    kind = " ".join(text.replace(",", " ").split())
    if kind not in BOX_OPTIONS:
        raise ValueError(f"{text!r} is not a box convention: expected one of {' | '.join(BOX_OPTIONS)}")
    return kind


def _frame_text(text: str) -> str:
    """Checked by `handler.readings.frames.reading` when the side is read (it names the forms)."""
    if not text.strip():
        raise ValueError(
            'expected a frame: "normalized", "swapped", "letterbox 640", "letterbox 640 stride 32", '
            '"letterbox-top-left 640", "resized 640" or "scale 0.5"'
        )
    return text.strip()


def _score_text(text: str) -> str:
    """Checked by `handler.readings.scores.reading` when the side is read (it names the form)."""
    if not text.strip():
        raise ValueError('expected a score scale: "scale 100" (percentages) or "scale 255"')
    return text.strip()


def _mask_text(text: str) -> str:
    """Checked by `handler.readings.masks.reading` when the side is read (it names the forms)."""
    if not text.strip():
        raise ValueError('expected a mask reading: "row-major", "normalized" or "percent"')
    return text.strip()


# Every read option, in the order of --help and of an inputs file's keys. A new one: an entry
# here and a field of its name in `ReadOptions` and in `side.SideSpec` (see `ReadOption`).
READ_OPTIONS: Final = (
    ReadOption(
        "names",
        "FILE",
        {
            "gt": "class names of the GT's ids: a .names/classes.txt list, a data.yaml, or a COCO file",
            "pred": "class names of the predictions' ids: a .names/classes.txt list, a data.yaml, or a "
            "COCO file",
        },
        "yolo, cartucho and coco-results, whose classes are ids",
        _file_reference,
        read_names_file,
    ),
    ReadOption(
        "layout",
        "COLUMNS",
        {
            "gt": 'column order of the GT\'s text label lines, e.g. "class x y w h" (frame detected, or '
            "add normalized / pixels)",
            "pred": 'column order of the predictions\' text label lines, e.g. "class score cx cy w h"',
        },
        "yolo and cartucho text label files",
        parse_layout,
    ),
    ReadOption(
        "model_version",
        "VERSION",
        {
            "gt": "not for the GT: a Label Studio export's GT is its annotations (see PRED_MODEL_VERSION)",
            "pred": "the model version whose predictions a Label Studio export gives, when it holds several",
        },
        "label-studio JSON exports, which may hold several models' predictions",
        _model_version,
    ),
    ReadOption(
        "box",
        "BOX",
        {
            "gt": 'the four numbers of a GT box: "x y w h", "x1 y1 x2 y2" or "cx cy w h" (or y first: '
            '"y1 x1 y2 x2", ...)',
            "pred": 'the four numbers of a prediction box: "x y w h", "x1 y1 x2 y2" or "cx cy w h" (or y '
            'first: "y1 x1 y2 x2", ...)',
        },
        "any format",
        _box_kind,
        rereads=True,
    ),
    ReadOption(
        "frame",
        "FRAME",
        {
            "gt": 'the GT\'s coordinate frame: "normalized", "letterbox 640", "resized 640" or "scale 0.5"',
            "pred": 'the predictions\' coordinate frame: "normalized", "letterbox 640", "resized 640" or '
            '"scale 0.5"',
        },
        "any format",
        _frame_text,
        rereads=True,
    ),
    ReadOption(
        "class_map",
        "FILE",
        {
            "gt": "a JSON object of GT class as written → GT class",
            "pred": "a JSON object of prediction class as written → GT class (a report's class_map.json)",
        },
        "any format",
        _file_reference,
        read_class_map_file,
        rereads=True,
    ),
    ReadOption(
        "score",
        "SCALE",
        {
            "gt": 'the scale the GT\'s confidences were written on: "scale 100" (percentages), "scale 255"',
            "pred": 'the scale the confidences were written on: "scale 100" (percentages), "scale 255"',
        },
        "any format",
        _score_text,
        rereads=True,
    ),
    ReadOption(
        "mask",
        "READING",
        {
            "gt": 'how the GT\'s masks were written: "row-major" (RLE runs counted row by row), '
            '"normalized" or "percent" (polygon points)',
            "pred": 'how the predictions\' masks were written: "row-major" (RLE runs counted row by row), '
            '"normalized" or "percent" (polygon points)',
        },
        "formats with masks",
        _mask_text,
        rereads=True,
    ),
)
# Key → what it is, for --help and the inputs schema: GT_NAMES, PRED_NAMES, GT_LAYOUT, PRED_LAYOUT.
READ_KEYS: Final = {option.key(side): option.help[side] for option in READ_OPTIONS for side in SIDES}
