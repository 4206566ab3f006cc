"""The node's inputs: read from the environment or a JSON file, validated against node.json."""

from handler.inputs.node_inputs import (
    DEFAULT_THRESHOLDS,
    IMAGES_KEY,
    IMAGES_TITLE,
    ConfidenceThreshold,
    NodeInputs,
    either_iou,
    input_spec,
    input_value,
    load_time_costs,
    node_defaults,
    option_labels,
    parse_inputs,
    read_environment,
    read_time_costs,
    select_number,
    select_options,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "IMAGES_KEY",
    "IMAGES_TITLE",
    "ConfidenceThreshold",
    "NodeInputs",
    "either_iou",
    "input_spec",
    "input_value",
    "load_time_costs",
    "node_defaults",
    "option_labels",
    "parse_inputs",
    "read_environment",
    "read_time_costs",
    "select_number",
    "select_options",
]
