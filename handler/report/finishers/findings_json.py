"""`findings.json`: the findings document itself."""

from __future__ import annotations

from typing import Final

from handler.report.finishing import FINDINGS, Finished, Finisher, Finishing
from handler.report.publish import FINDINGS_PART


def _document(finishing: Finishing) -> Finished:
    return Finished({FINDINGS_PART: finishing.built().to_json()})


FINDINGS_JSON: Final = Finisher("findings.json", FINDINGS, _document, (FINDINGS_PART,))
