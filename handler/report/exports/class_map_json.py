"""`class_map.json`: class as written -> GT class, when a class reading scores clearly better
; the file a user reviews and passes back with the class-map reading option."""

from __future__ import annotations

from typing import Final

from handler.readings.classes import class_map_json
from handler.report.findings import Findings
from handler.report.publish import ReportPart
from handler.sections.finishing import FINDINGS, Finished, Finisher, Finishing

CLASS_MAP_PART: Final = ReportPart("class_map", "class_map.json", "application/json")


def _class_map(finishing: Finishing) -> Finished:
    reading = finishing.built(Findings).other_reading
    if reading is None or not reading.class_map:
        return Finished()
    return Finished({CLASS_MAP_PART: class_map_json(tuple(reading.class_map.items()))})


CLASS_MAP_JSON: Final = Finisher("class_map.json", FINDINGS, _class_map, (CLASS_MAP_PART,))
