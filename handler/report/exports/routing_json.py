"""`routing.json`: the report's recommendation as a file a labeling tool reads (class -> threshold)."""

from __future__ import annotations

from typing import Final

import orjson

from handler.report.publish import ReportPart
from handler.sections.finishing import MERGED, Finished, Finisher, Finishing

ROUTING_PART: Final = ReportPart("routing", "routing.json", "application/json")


def _routing(finishing: Finishing) -> Finished:
    """`routing.json`: every class with a box at some threshold -> the confidence threshold to
    pre-label it at, or null to draw it (the findings list only the classes that depart)."""
    table = finishing.merged.policy.routing_table()
    return Finished({ROUTING_PART: orjson.dumps(table, option=orjson.OPT_INDENT_2)})


ROUTING_JSON: Final = Finisher("routing.json", MERGED, _routing, (ROUTING_PART,))
