"""`routing.json`: the report's recommendation as a file a labeling tool reads (class -> threshold)."""

from __future__ import annotations

from typing import Final

import orjson

from handler.report.findings import Findings
from handler.report.publish import ReportPart
from handler.sections.finishing import FINDINGS, Finished, Finisher, Finishing

ROUTING_PART: Final = ReportPart("routing", "routing.json", "application/json")


def _routing(finishing: Finishing) -> Finished:
    """`routing.json`: every class either side carries -> the confidence threshold to pre-label it
    at, or null to draw it: the findings' recommendation, which the page, the summary and the
    export say too (the findings list only the classes that depart)."""
    recommended = finishing.built(Findings).recommendation
    table = {name: recommended.threshold_for(name) for name in finishing.merged.policy.class_names}
    return Finished({ROUTING_PART: orjson.dumps(table, option=orjson.OPT_INDENT_2)})


ROUTING_JSON: Final = Finisher("routing.json", FINDINGS, _routing, (ROUTING_PART,))
