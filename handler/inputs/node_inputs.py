"""Validate the node's inputs with a JSON Schema built from node.json's `inputs` at run time.

node.json is the platform's interface and the single source of truth: no second copy of
its keys, options or defaults lives in the code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from handler.datasets import format_names
from handler.datasets.layouts import Layout
from handler.datasets.read_options import READ_KEYS, checked_layout
from handler.engine import Thresholds
from handler.errors import InputError, quoted
from handler.resources import node_config

if TYPE_CHECKING:
    import jsonschema

# Not node inputs (node.json stays the platform's): options a user may add in --inputs FILE.
FORMAT_KEYS: Final = ("GT_FORMAT", "PRED_FORMAT")
EXTRA_KEYS: Final = (*FORMAT_KEYS, *READ_KEYS)


@dataclass(frozen=True)
class NodeInputs:
    """The validated inputs; a format is one of `format_names()` (checked by the schema)."""

    gt_dataset: str
    pred_dataset: str
    thresholds: Thresholds
    threshold_input: str  # the raw CONFIDENCE_THRESHOLD, as given
    threshold_replaced: bool  # not a number, so 0 was used (SPEC §2)
    gt_format: str | None = None
    pred_format: str | None = None
    gt_names: str | None = None  # a names file reference (GT_NAMES)
    pred_names: str | None = None
    gt_layout: Layout | None = None  # the column layout of text label lines (GT_LAYOUT)
    pred_layout: Layout | None = None
    pred_model_version: str | None = (
        None  # whose predictions a Label Studio export gives (PRED_MODEL_VERSION)
    )


def input_spec(key: str) -> Mapping[str, Any]:
    """node.json's entry of the input `key`."""
    return next(spec for spec in node_config()["inputs"] if spec["key"] == key)


def select_options(key: str) -> list[str]:
    """The values a select input accepts, in node.json's order."""
    return [option["value"] for option in input_spec(key)["options"]["options"]]


def option_labels(key: str) -> list[str]:
    """The options of a select input as the platform shows them (`0.30`, not `0.3`)."""
    return [option["label"] for option in input_spec(key)["options"]["options"]]


def _as_number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def select_value(key: str, value: str) -> str | None:
    """The option of `key` that `value` names: itself, its label, or a number equal to it (` 0.30`)."""
    number = _as_number(value)
    for option in input_spec(key)["options"]["options"]:
        if value in (option["value"], option["label"]) or number == _as_number(option["value"]):
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
    properties.update(
        {key: {"type": "string", "minLength": 1, "title": what} for key, what in READ_KEYS.items()}
    )
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


def _with_defaults(raw: Mapping[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    values = {key: _canonical(key, v) for key, v in raw.items()}
    for key, prop in schema["properties"].items():
        if key not in values and "default" in prop:
            values[key] = prop["default"]
    return values


def _error(error: jsonschema.ValidationError, schema: dict[str, Any]) -> InputError:
    key = str(error.path[0]) if error.path else None
    if error.validator == "enum" and key is not None:
        shown = option_labels(key) if key in _select_keys() else schema["properties"][key]["enum"]
        return InputError(f"{quoted(error.instance)} is not one of the options {', '.join(shown)}", key)
    if error.validator == "required":
        return InputError(f"missing required input: {error.message.split()[0]}")
    if error.validator == "additionalProperties":
        given: dict[str, Any] = error.instance if isinstance(error.instance, dict) else {}
        unknown = sorted(set(given) - set(schema["properties"]))
        expected = ", ".join(schema["properties"])
        return InputError(
            f"unknown input {quoted(unknown[0]) if unknown else ''}: remove it; expected keys {expected}"
        )
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


def _check(values: Mapping[str, Any], schema: dict[str, Any]) -> None:
    if _plainly_valid(values, schema):
        return
    import jsonschema  # what is wrong, in jsonschema's words (a valid run does not import it)

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(values))
    if error is not None:
        raise _error(error, schema)


def confidence_threshold(raw: str) -> tuple[float, bool]:
    """SPEC §2: not a number → 0 (reported: the bool); a number outside [0, 1] → a clear error."""
    try:
        value = float(raw.strip())
    except ValueError:
        return 0.0, True
    if not math.isfinite(value):
        return 0.0, True
    if not 0.0 <= value <= 1.0:
        raise InputError(
            f"{quoted(raw)} is outside the range 0 to 1 (enter e.g. 0.5, not 50)", "CONFIDENCE_THRESHOLD"
        )
    return value, False


def _thresholds(values: Mapping[str, str]) -> tuple[Thresholds, bool]:
    """The thresholds of valid input strings, and whether CONFIDENCE_THRESHOLD was replaced."""
    threshold, replaced = confidence_threshold(values["CONFIDENCE_THRESHOLD"])
    return Thresholds(float(values["IOU_MIN"]), float(values["IOU_PERFECT"]), threshold), replaced


@cache
def _inputs_schema(formats: tuple[str, ...]) -> dict[str, Any]:
    """The schema, built once per set of registered formats (the schema lists them): every run
    of a process, a test or a CLI call after the first reuses it."""
    return inputs_schema()


def parse_inputs(raw: Mapping[str, Any]) -> NodeInputs:
    schema = _inputs_schema(tuple(format_names()))
    values = _with_defaults(raw, schema)
    _check(values, schema)
    thresholds, replaced = _thresholds(values)
    return NodeInputs(
        gt_dataset=values["GT_DATASET"],
        pred_dataset=values["PRED_DATASET"],
        thresholds=thresholds,
        threshold_input=values["CONFIDENCE_THRESHOLD"],
        threshold_replaced=replaced,
        gt_format=values.get("GT_FORMAT"),
        pred_format=values.get("PRED_FORMAT"),
        gt_names=values.get("GT_NAMES"),
        pred_names=values.get("PRED_NAMES"),
        gt_layout=_layout(values, "GT_LAYOUT"),
        pred_layout=_layout(values, "PRED_LAYOUT"),
        pred_model_version=values.get("PRED_MODEL_VERSION"),
    )


def _layout(values: Mapping[str, str], key: str) -> Layout | None:
    return checked_layout(key, values[key]) if key in values else None


def input_value(key: str, value: str) -> str:
    """One input checked on its own by `parse_inputs`' rules (the CLI checks each option as it is
    read): its canonical text (`0.3` → `0.30`), else an InputError naming `key`."""
    properties = inputs_schema()["properties"]
    canonical = _canonical(key, value)
    schema = {"type": "object", "properties": {key: properties[key]}}
    _check({key: canonical}, schema)
    if key == "CONFIDENCE_THRESHOLD":
        confidence_threshold(canonical)
    return str(canonical)


# The defaults of the metric API, the CLI and the tests: node.json's, nowhere else.
DEFAULT_THRESHOLDS: Final = _thresholds(node_defaults())[0]
