"""`routing.json`: the report's recommendation as a file a labeling tool reads (class -> threshold)."""

from __future__ import annotations

from typing import Final

import orjson

from handler.report.findings import Recommendation
from handler.report.finishing import FINDINGS, Finished, Finisher, Finishing
from handler.report.publish import ReportPart

ROUTING_PART: Final = ReportPart("routing", "routing.json", "application/json")


def routing_part(section: Recommendation) -> bytes:
    """`routing.json`: class -> confidence threshold to pre-label at, or null to draw it."""
    policy = {row.class_name: row.threshold for row in section.classes}
    return orjson.dumps(policy, option=orjson.OPT_INDENT_2)


def _routing(finishing: Finishing) -> Finished:
    return Finished({ROUTING_PART: routing_part(finishing.built().recommendation)})


ROUTING_JSON: Final = Finisher("routing.json", FINDINGS, _routing, (ROUTING_PART,))
