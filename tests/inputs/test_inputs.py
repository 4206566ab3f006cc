"""Node inputs: validated against node.json itself (contract §2)."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.cli import command_parsers, parse_command_line, parser
from handler.errors import InputError
from handler.inputs import (
    DEFAULT_THRESHOLDS,
    input_spec,
    node_defaults,
    parse_inputs,
    read_environment,
    select_options,
)
from handler.inputs.node_inputs import _plainly_valid, inputs_schema
from handler.metric import PrelabelingEfficiency
from handler.resources import node_config

REQUIRED = {"GT_DATASET": "gt.json", "PRED_DATASET": "pred.json"}


def test_schema_is_built_from_node_json() -> None:
    schema = inputs_schema()
    for spec in node_config()["inputs"]:
        assert spec["key"] in schema["properties"]
        if spec["type"] == "select":
            assert schema["properties"][spec["key"]]["enum"] == [
                o["value"] for o in spec["options"]["options"]
            ]
    assert set(schema["required"]) == {"GT_DATASET", "PRED_DATASET"}


def test_defaults_are_applied() -> None:
    inputs = parse_inputs(REQUIRED)
    assert (inputs.thresholds.iou_min, inputs.thresholds.iou_perfect) == (0.3, 0.8)
    assert inputs.thresholds.confidence_threshold == 0.5
    assert inputs.confidence.given == "0.5" and not inputs.confidence.replaced


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("IOU_MIN", "0.35", "IOU_MIN: '0.35' is not one of the options 0.10, 0.20, 0.30, 0.40, 0.50"),
        ("IOU_PERFECT", "1", "IOU_PERFECT: '1' is not one of the options 0.60, 0.70, 0.80, 0.90, 0.95"),
        ("CONFIDENCE_THRESHOLD", "50", "CONFIDENCE_THRESHOLD: '50' is outside the range 0 to 1"),
        ("CONFIDENCE_THRESHOLD", "-0.1", "CONFIDENCE_THRESHOLD: '-0.1' is outside the range 0 to 1"),
        ("GT_DATASET", "", "GT_DATASET"),
        ("SURPRISE", "1", "unknown input"),
    ],
)
def test_bad_values_are_refused_with_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(InputError, match=None) as caught:
        parse_inputs({**REQUIRED, key: value})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("IOU_MIN", "0.30", 0.3),
        ("IOU_MIN", " 0.3", 0.3),
        ("IOU_MIN", ".1", 0.1),
        ("IOU_MIN", 0.5, 0.5),
        ("IOU_PERFECT", "0.950", 0.95),
        ("IOU_PERFECT", "0.60 ", 0.6),
    ],
)
def test_a_number_equal_to_an_option_is_that_option(key: str, value: object, expected: float) -> None:
    thresholds = parse_inputs({**REQUIRED, key: value}).thresholds
    assert (thresholds.iou_min if key == "IOU_MIN" else thresholds.iou_perfect) == expected


def test_the_refusal_lists_the_options_as_node_json_labels_them() -> None:
    labels = [option["label"] for option in input_spec("IOU_MIN")["options"]["options"]]
    with pytest.raises(InputError) as caught:
        parse_inputs({**REQUIRED, "IOU_MIN": "0.35"})
    assert str(caught.value).endswith(", ".join(labels))


def test_missing_dataset_is_refused() -> None:
    with pytest.raises(InputError, match="missing required input: 'PRED_DATASET'"):
        parse_inputs({"GT_DATASET": "gt.json"})


@pytest.mark.parametrize("raw", ["", "abc", "nan", "inf", "-inf", " "])
def test_non_numeric_threshold_is_zero_and_reported(raw: str) -> None:
    inputs = parse_inputs({**REQUIRED, "CONFIDENCE_THRESHOLD": raw})
    assert inputs.thresholds.confidence_threshold == 0.0
    assert inputs.confidence.replaced and inputs.confidence.given == raw


@pytest.mark.parametrize(("raw", "value"), [("0", 0.0), ("1", 1.0), ("0.25", 0.25), (" 0.7 ", 0.7)])
def test_threshold_bounds_are_inclusive(raw: str, value: float) -> None:
    assert parse_inputs({**REQUIRED, "CONFIDENCE_THRESHOLD": raw}).thresholds.confidence_threshold == value


def test_numbers_in_an_inputs_file_are_read_as_their_text() -> None:
    inputs = parse_inputs({**REQUIRED, "IOU_MIN": 0.5, "CONFIDENCE_THRESHOLD": 0.25})
    assert inputs.thresholds.iou_min == 0.5 and inputs.confidence.given == "0.25"


def test_environment_reads_only_node_keys() -> None:
    env = {"GT_DATASET": "a", "PRED_DATASET": "b", "HOME": "/root", "IOU_MIN": "0.5"}
    assert read_environment(env) == {"GT_DATASET": "a", "PRED_DATASET": "b", "IOU_MIN": "0.5"}


def test_every_default_comes_from_node_json() -> None:
    defaults = node_defaults()
    assert parse_inputs(REQUIRED).thresholds == DEFAULT_THRESHOLDS
    assert PrelabelingEfficiency().thresholds == DEFAULT_THRESHOLDS
    args = parse_command_line(["gt", "pred"])  # the CLI's options come parsed
    assert (args.iou_min, args.iou_perfect, args.confidence_threshold.given) == (
        float(defaults["IOU_MIN"]),
        float(defaults["IOU_PERFECT"]),
        defaults["CONFIDENCE_THRESHOLD"],
    )


def test_cli_help_lists_the_options_of_node_json() -> None:
    text = " ".join(command_parsers(parser())["run"].format_help().split())
    for key in ("IOU_MIN", "IOU_PERFECT"):
        assert " ".join(select_options(key)) in text


def test_an_unknown_format_is_refused_with_the_options() -> None:
    with pytest.raises(InputError, match="GT_FORMAT: 'xml' is not one of the options coco, "):
        parse_inputs({**REQUIRED, "GT_FORMAT": "xml"})


VALUES = st.one_of(
    st.sampled_from(["", "gt.json", "0.5", "0.50", "0.3", "coco", "yolo", "x c y w h", "abc"]),
    st.text(max_size=3),
    st.integers(-1, 2),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*inputs_schema()["properties"], "OTHER"]), VALUES, max_size=12))
def test_a_plainly_valid_object_is_what_jsonschema_finds_valid(values: dict[str, object]) -> None:
    schema = inputs_schema()
    valid = not list(jsonschema.Draft202012Validator(schema).iter_errors(values))
    assert _plainly_valid(values, schema) == valid
    cli_schema = {"type": "object", "properties": schema["properties"]}  # `input_value`'s: no other rule
    assert _plainly_valid(values, cli_schema) == (
        not list(jsonschema.Draft202012Validator(cli_schema).iter_errors(values))
    )


def test_a_schema_keyword_it_does_not_know_is_left_to_jsonschema() -> None:
    schema = inputs_schema()
    valid = {"GT_DATASET": "gt.json", "PRED_DATASET": "pred.json"}
    assert _plainly_valid(valid, schema)
    assert not _plainly_valid(valid, {**schema, "minProperties": 1})
    pattern = {
        **schema,
        "properties": {**schema["properties"], "GT_DATASET": {"type": "string", "pattern": "x"}},
    }
    assert not _plainly_valid(valid, pattern)


def test_images_is_an_inputs_file_key_and_a_run_option_never_a_node_json_input() -> None:
    """IMAGES (`--images ROOT`) names where the images are; node.json stays the platform's."""
    assert "IMAGES" not in {spec["key"] for spec in node_config()["inputs"]}
    base = {"GT_DATASET": "gt.json", "PRED_DATASET": "pred.json"}
    assert parse_inputs(base).images is None
    assert parse_inputs({**base, "IMAGES": "s3://bucket/images"}).images == "s3://bucket/images"
    with pytest.raises(InputError, match="IMAGES"):
        parse_inputs({**base, "IMAGES": ""})
    args = parse_command_line(["gt.json", "pred.json", "--images", "photos/"])
    assert args.images == "photos/"


@pytest.mark.parametrize(
    ("given", "read"),
    [("0,5", 0.5), (" 0,35 ", 0.35), (",9", 0.9), ("1,0", 1.0), ("0,", None), ("0,5,1", None)],
)
def test_a_decimal_comma_in_the_threshold_is_a_point_and_said(given: str, read: float | None) -> None:
    inputs = parse_inputs({**REQUIRED, "CONFIDENCE_THRESHOLD": given})
    if read is None:  # a number in neither notation: the platform's rule, 0
        assert inputs.confidence.replaced and inputs.confidence.value == 0 and inputs.decimal_commas == ()
    else:
        assert (inputs.confidence.value, inputs.confidence.replaced) == (read, False)
        assert inputs.decimal_commas == (("CONFIDENCE_THRESHOLD", given),)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD"]), st.data())
def test_every_number_input_reads_a_comma_as_its_point(key: str, data: st.DataObject) -> None:
    options = [
        o["value"]
        for o in next(i for i in node_config()["inputs"] if i["key"] == key)
        .get("options", {})
        .get("options", [])
    ]
    point = data.draw(
        st.sampled_from(options) if options else st.sampled_from(["0.25", "0.5", "0.75", "1.0"])
    )
    with_point, with_comma = (
        parse_inputs({**REQUIRED, key: point}),
        parse_inputs({**REQUIRED, key: point.replace(".", ",")}),
    )
    assert with_comma.thresholds == with_point.thresholds
    assert with_comma.decimal_commas == ((key, point.replace(".", ",")),)


@pytest.mark.parametrize(
    ("raw", "meant"),
    [
        ({"GT_DATASET": "gt.json", "PRED": "p.json"}, "PRED_DATASET"),
        ({**REQUIRED, "IOU_MINIMUM": "0.3"}, "IOU_MIN"),
    ],
)
def test_an_unknown_key_is_named_with_the_key_it_likely_means(raw: dict[str, str], meant: str) -> None:
    with pytest.raises(InputError, match=rf"unknown input '{list(raw)[-1]}': did you mean {meant}\?"):
        parse_inputs(raw)


def test_each_command_s_usage_line_names_it() -> None:
    """`prelabel-eval run --help` says `run` too (it is the default command: the top help says so)."""
    for name, command in command_parsers(parser()).items():
        assert command.format_usage().startswith(f"usage: prelabel-eval {name} "), name
