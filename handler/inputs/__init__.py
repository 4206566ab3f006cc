"""The node's inputs: read from the environment or a JSON file, validated against node.json."""

from handler.inputs.node_inputs import NodeInputs, parse_inputs, read_environment

__all__ = ["NodeInputs", "parse_inputs", "read_environment"]
