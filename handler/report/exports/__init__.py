"""Files for other tools, each built by a finisher once the run is merged and stored with its report
(routing.json, class_map.json; a new one: handler/report/finishers/__init__.py says how).

The per-box outcome lines are the one export a shard writes itself, chunk by chunk, so their
encoding lives below execution (`handler.engine.outcome_lines`)."""

from handler.report.exports.routing_json import ROUTING_JSON, ROUTING_PART, routing_part

__all__ = ["ROUTING_JSON", "ROUTING_PART", "routing_part"]
