"""The node's inputs: read from the environment or a JSON file, validated against node.json."""

from handler.inputs.node_inputs import (
    DEFAULT_THRESHOLDS,
    NodeInputs,
    input_spec,
    node_defaults,
    parse_inputs,
    read_environment,
    select_options,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "NodeInputs",
    "input_spec",
    "node_defaults",
    "parse_inputs",
    "read_environment",
    "select_options",
]
