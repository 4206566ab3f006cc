"""Validate the node's inputs with a JSON Schema built from node.json's `inputs` at run time.

node.json is the platform's interface and the single source of truth: no second copy of
its keys, options or defaults lives in the code.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

import msgspec

from handler.datasets import format_names
from handler.datasets.pairing import ScoreOn
from handler.datasets.read_options import READ_KEYS, READ_OPTIONS, SIDES, Side, option_label
from handler.datasets.side import SideSpec
from handler.engine import Thresholds
from handler.engine.timecost import TimeCosts
from handler.errors import InputError, StorageError, quoted
from handler.resources import node_config
from handler.storage import open_source

if TYPE_CHECKING:
    import jsonschema

# Not node inputs (node.json stays the platform's): options a user may add in --inputs FILE.
FORMAT_KEYS: Final = ("GT_FORMAT", "PRED_FORMAT")
# A costs file (`prelabel-eval calibrate` writes one): the seconds per action of the time estimate.
TIME_COSTS_KEY: Final = "TIME_COSTS"
# The folder or s3:// prefix of the images, drawn behind the page's sketches (`--images`).
IMAGES_KEY: Final = "IMAGES"
IMAGES_TITLE: Final = "folder or s3:// prefix of the images, drawn behind the page's sketches"
EXTRA_KEYS: Final = (*FORMAT_KEYS, *READ_KEYS, TIME_COSTS_KEY, IMAGES_KEY)
_READ_OPTION_KEYS: Final = {option.key(side): (option, side) for option in READ_OPTIONS for side in SIDES}
# The number inputs, in which a decimal comma is read as a point (`0,5` is 0.5), and said.
NUMBER_KEYS: Final = ("IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD")
_DECIMAL_COMMA: Final = re.compile(r"\s*[+-]?\d*,\d+\s*")


def decimal_point(text: str) -> str | None:
    """`text` with its decimal comma read as a point (` 0,5` -> ` 0.5`); None when it has none."""
    return text.replace(",", ".") if _DECIMAL_COMMA.fullmatch(text) else None


class ConfidenceThreshold(msgspec.Struct, frozen=True):
    """CONFIDENCE_THRESHOLD, parsed once (contract §2): the text as given, the number used, and
    whether that number replaced a text that is not one (0 then)."""

    given: str
    value: float
    replaced: bool

    @classmethod
    def parse(cls, text: str) -> ConfidenceThreshold:
        """Not a number → 0, replaced; a number outside [0, 1] → an InputError; a decimal comma
        is read as a point."""
        value = _as_number(text)
        if value is None or not math.isfinite(value):
            return cls(text, 0.0, True)
        if not 0.0 <= value <= 1.0:
            raise InputError(
                f"{quoted(text)} is outside the range 0 to 1 (enter e.g. 0.5, not 50)", "CONFIDENCE_THRESHOLD"
            )
        return cls(text, value, False)


class NodeInputs(msgspec.Struct, frozen=True):
    """The validated inputs, each parsed once: everything downstream reads them from here."""

    gt: SideSpec
    pred: SideSpec
    iou_min: float
    iou_perfect: float
    confidence: ConfidenceThreshold
    time_costs: TimeCosts | None = None  # read from the TIME_COSTS file, when one is given
    images: str | None = None  # where the images are (IMAGES); None: found beside the labels, or none
    decimal_commas: tuple[tuple[str, str], ...] = ()  # (key, text as given) of numbers written 0,5
    score_on: ScoreOn = "auto"  # SCORE_ON: masks where both sides have them, or always boxes / masks

    @property
    def thresholds(self) -> Thresholds:
        """The engine's view of the three thresholds (built from the fields above, never held)."""
        return Thresholds(self.iou_min, self.iou_perfect, self.confidence.value)


def input_spec(key: str) -> Mapping[str, Any]:
    """node.json's entry of the input `key`."""
    return next(spec for spec in node_config()["inputs"] if spec["key"] == key)


def select_options(key: str) -> list[str]:
    """The values a select input accepts, in node.json's order."""
    return [option["value"] for option in input_spec(key)["options"]["options"]]


def option_labels(key: str) -> list[str]:
    """The options of a select input as the platform shows them (`0.30`, not `0.3`)."""
    return [option["label"] for option in input_spec(key)["options"]["options"]]


IOU_KEYS: Final = ("IOU_MIN", "IOU_PERFECT")


def _iou_options(key: str) -> list[float]:
    return [float(value) for value in select_options(key)]


def swapped_ious(values: Mapping[str, Any]) -> InputError | None:
    """IOU_MIN given one of IOU_PERFECT's options and IOU_PERFECT one of IOU_MIN's: the two look
    swapped, and the error names both (each alone would only say it is not one of its options)."""
    low, high = (_as_number(str(values.get(key, ""))) for key in IOU_KEYS)
    if low is None or high is None:
        return None
    if low not in _iou_options("IOU_PERFECT") or high not in _iou_options("IOU_MIN"):
        return None
    return InputError(
        f"IOU_MIN (--iou-min) {low:g} and IOU_PERFECT (--iou-perfect) {high:g} look swapped: IOU_MIN, "
        f"where a match starts, is one of {', '.join(option_labels('IOU_MIN'))} and IOU_PERFECT, where it "
        f"is correct, one of {', '.join(option_labels('IOU_PERFECT'))}; "
        f"try IOU_MIN={high:g} IOU_PERFECT={low:g}"
    )


def either_iou(key: str, text: str) -> float | None:
    """An IoU value refused as `key` but one of the other IoU input's options: the pair's check
    (`swapped_ious`) says more about it than `key`'s options alone (None: not such a value)."""
    other = IOU_KEYS[1 - IOU_KEYS.index(key)] if key in IOU_KEYS else None
    value = _as_number(text)
    return value if other is not None and value in _iou_options(other) else None


def _as_number(text: str) -> float | None:
    try:
        return float((decimal_point(text) or text).strip())
    except ValueError:
        return None


def select_value(key: str, value: str) -> str | None:
    """The option of `key` that `value` names: itself, its label, or a number equal to it (` 0.30`)."""
    number = _as_number(value)
    for option in input_spec(key)["options"]["options"]:
        same_number = number is not None and number == _as_number(option["value"])  # text names no number
        if value in (option["value"], option["label"]) or same_number:
            return str(option["value"])
    return None


def select_number(key: str, value: float) -> float:
    """A numeric select value of the Python API, held to node.json's options like the node's inputs."""
    if select_value(key, repr(float(value))) is None:
        options = ", ".join(option_labels(key))
        raise ValueError(f"Expected {key.lower()} to be one of {options} but got {value!r}")
    return float(value)


def node_defaults() -> dict[str, str]:
    """node.json's default of every input that has one."""
    specs = node_config()["inputs"]
    return {spec["key"]: spec["default"] for spec in specs if spec.get("default") is not None}


def _property(spec: Mapping[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "title": spec["label"]}
    if spec["type"] == "dataset":
        schema["minLength"] = 1
    if spec["type"] == "select":
        schema["enum"] = select_options(spec["key"])
    if spec.get("default") is not None:
        schema["default"] = spec["default"]
    return schema


def inputs_schema() -> dict[str, Any]:
    """JSON Schema of the node's inputs object, from node.json."""
    specs = node_config()["inputs"]
    properties = {spec["key"]: _property(spec) for spec in specs}
    properties.update({key: {"type": "string", "enum": format_names()} for key in FORMAT_KEYS})
    extra = {**READ_KEYS, TIME_COSTS_KEY: "a costs file (calibrate's)", IMAGES_KEY: IMAGES_TITLE}
    properties.update({key: {"type": "string", "minLength": 1, "title": what} for key, what in extra.items()})
    return {
        "type": "object",
        "properties": properties,
        "required": [s["key"] for s in specs if s.get("required") and s.get("default") is None],
        "additionalProperties": False,
    }


def read_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The inputs the platform passes as environment variables named by node.json's keys."""
    keys = [spec["key"] for spec in node_config()["inputs"]]
    return {key: environ[key] for key in (*keys, *EXTRA_KEYS) if key in environ}


def _canonical(key: str, value: Any) -> Any:
    """A number becomes text; a select value that names an option becomes that option's value."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and key in _select_keys():
        return select_value(key, value) or value
    return value


def _select_keys() -> set[str]:
    return {spec["key"] for spec in node_config()["inputs"] if spec["type"] == "select"}


def _with_defaults(raw: Mapping[str, Any], schema: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """`raw` canonical, with the defaults of the keys neither in it nor `given` (already parsed)."""
    values = {key: _canonical(key, v) for key, v in raw.items()}
    for key, prop in schema["properties"].items():
        if key not in values and key not in given and "default" in prop:
            values[key] = prop["default"]
    return values


def _error(error: jsonschema.ValidationError, schema: dict[str, Any]) -> InputError:
    key = str(error.path[0]) if error.path else None
    if error.validator == "enum" and key is not None:
        shown = option_labels(key) if key in _select_keys() else schema["properties"][key]["enum"]
        return InputError(f"{quoted(error.instance)} is not one of the options {', '.join(shown)}", key)
    if error.validator == "required":
        return InputError(f"missing required input: {error.message.split()[0]}")
    return InputError(error.message, key or "inputs")


# The JSON Schema keywords `inputs_schema` writes, which `_plainly_valid` decides on its own.
OBJECT_KEYWORDS: Final = frozenset({"type", "properties", "required", "additionalProperties"})
STRING_KEYWORDS: Final = frozenset({"type", "title", "minLength", "enum", "default"})


def _plainly_valid(values: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    """`values` meets `schema`, read by the JSON Schema rules of the keywords above; False when in
    doubt (another keyword), and jsonschema decides. A valid run so never imports jsonschema,
    which costs more than everything else the inputs do; a mistake gets jsonschema's words."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    return (
        set(schema) <= OBJECT_KEYWORDS
        and schema.get("type") == "object"
        and extra in (True, False)
        and (extra or set(values) <= set(properties))
        and set(schema.get("required", ())) <= set(values)
        and all(_plain_string(values[key], properties[key]) for key in values if key in properties)
    )


def _plain_string(value: Any, schema: Mapping[str, Any]) -> bool:
    return (
        set(schema) <= STRING_KEYWORDS
        and schema.get("type") == "string"
        and isinstance(value, str)
        and len(value) >= schema.get("minLength", 0)  # code points, as JSON Schema counts
        and ("enum" not in schema or value in schema["enum"])
    )


def _unknown_key(values: Mapping[str, Any], schema: dict[str, Any]) -> InputError | None:
    """A key the schema does not know, named with the known key it most likely means."""
    known = list(schema["properties"])
    unknown = sorted(set(values) - set(known)) if schema.get("additionalProperties", True) is False else []
    if not unknown:
        return None
    key = unknown[0]
    if not key.strip():
        return InputError(f"unknown input {quoted(key)}: remove it")
    required = schema.get("required", [])
    starting = sorted((k for k in known if k.startswith(key.upper())), key=lambda k: (k not in required, k))
    closest = starting[:1] or difflib.get_close_matches(key.upper(), known, n=1, cutoff=0.5)
    meant = f": did you mean {closest[0]}?" if closest else f"; expected one of {', '.join(known)}"
    return InputError(f"unknown input {quoted(key)}{meant}")


def _check(values: Mapping[str, Any], schema: dict[str, Any]) -> None:
    if _plainly_valid(values, schema):
        return
    unknown = _unknown_key(values, schema)
    if unknown is not None:  # before a required key it may be the misspelling of
        raise unknown
    import jsonschema  # what is wrong, in jsonschema's words (a valid run does not import it)

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(values))
    if error is not None:
        raise _error(error, schema)


def _typed(key: str, text: str) -> Any:
    """The value of one valid input text: a number, a `ConfidenceThreshold`, a read option's value."""
    if key in ("IOU_MIN", "IOU_PERFECT"):
        return float(text)
    if key == "CONFIDENCE_THRESHOLD":
        return ConfidenceThreshold.parse(text)
    if key in _READ_OPTION_KEYS:
        option, side = _READ_OPTION_KEYS[key]
        return option.checked(side, text)
    if key == TIME_COSTS_KEY:
        return read_time_costs(text, key)
    return text


def load_time_costs(path: str) -> TimeCosts:
    """A costs file (`prelabel-eval calibrate` writes one), as `--time-costs` reads it: the Python API's."""
    return read_time_costs(path, TIME_COSTS_KEY)


def read_time_costs(path: str, key: str) -> TimeCosts:
    """The costs file at `path` (`TimeCosts.from_json`), its mistakes as the one-line error of the
    input or option `key`."""
    try:
        return TimeCosts.from_json(open_source(path, option_label(key)).read_bytes(), path)
    except StorageError as error:  # not a regular file, too large, missing: said by the storage layer
        raise InputError(f"{path}: cannot read the costs file ({error})", key) from None
    except OSError as error:
        raise InputError(f"{path}: cannot read the costs file ({error.strerror})", key) from None
    except ValueError as error:
        raise InputError(str(error), key) from None


def _side(values: Mapping[str, Any], side: Side) -> SideSpec:
    prefix = side.upper()
    given = {o.field: values[o.key(side)] for o in READ_OPTIONS if o.key(side) in values}
    return SideSpec(side, values[f"{prefix}_DATASET"], values.get(f"{prefix}_FORMAT"), **given)


@cache
def _inputs_schema(formats: tuple[str, ...]) -> dict[str, Any]:
    """The schema, built once per set of registered formats (the schema lists them): every run
    of a process, a test or a CLI call after the first reuses it."""
    return inputs_schema()


def parse_inputs(raw: Mapping[str, Any], parsed: Mapping[str, Any] | None = None) -> NodeInputs:
    """The inputs of `raw` (texts by node.json key, defaults filled in) checked and parsed.

    `parsed` holds values a caller already parsed key by key with `input_value` (the CLI, as it
    reads each option): they are taken as they are, never parsed a second time.
    """
    parsed = parsed or {}
    schema = _inputs_schema(tuple(format_names()))
    values = _with_defaults(raw, schema, set(parsed))
    swapped = swapped_ious({**values, **parsed})
    if swapped is not None:
        raise swapped
    _check(values, schema)
    for key in set(IOU_KEYS) & set(parsed):  # a value the CLI let through for the pair's check
        input_value(key, str(parsed[key]))
    typed = {key: _typed(key, text) for key, text in values.items()} | dict(parsed)
    return NodeInputs(
        gt=_side(typed, "gt"),
        pred=_side(typed, "pred"),
        iou_min=typed["IOU_MIN"],
        iou_perfect=typed["IOU_PERFECT"],
        confidence=typed["CONFIDENCE_THRESHOLD"],
        time_costs=typed.get(TIME_COSTS_KEY),
        images=typed.get(IMAGES_KEY),
        decimal_commas=_decimal_commas(raw, typed),
        score_on=typed["SCORE_ON"],
    )


def _decimal_commas(raw: Mapping[str, Any], typed: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The number inputs given with a decimal comma, as given (a parsed threshold knows its text)."""
    given = {key: raw[key] for key in NUMBER_KEYS if isinstance(raw.get(key), str)}
    given["CONFIDENCE_THRESHOLD"] = typed["CONFIDENCE_THRESHOLD"].given
    return tuple((key, text) for key, text in given.items() if decimal_point(text) is not None)


def input_value(key: str, value: str) -> Any:
    """One input checked on its own by `parse_inputs`' rules (the CLI checks each option as it is
    read), and parsed: what `parse_inputs` takes in `parsed`; else an InputError naming `key`."""
    properties = inputs_schema()["properties"]
    canonical = _canonical(key, value)
    schema = {"type": "object", "properties": {key: properties[key]}}
    _check({key: canonical}, schema)
    return _typed(key, str(canonical))


def _thresholds(values: Mapping[str, str]) -> Thresholds:
    typed = {key: _typed(key, values[key]) for key in ("IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD")}
    return Thresholds(typed["IOU_MIN"], typed["IOU_PERFECT"], typed["CONFIDENCE_THRESHOLD"].value)


# The defaults of the metric API, the CLI and the tests: node.json's, nowhere else.
DEFAULT_THRESHOLDS: Final = _thresholds(node_defaults())
