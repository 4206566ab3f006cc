"""`findings.json`: the findings document itself."""

from __future__ import annotations

from typing import Final

from handler.report.findings import Findings
from handler.report.publish import FINDINGS_PART
from handler.sections.finishing import FINDINGS, Finished, Finisher, Finishing


def _document(finishing: Finishing) -> Finished:
    return Finished({FINDINGS_PART: finishing.built(Findings).to_json()})


FINDINGS_JSON: Final = Finisher("findings.json", FINDINGS, _document, (FINDINGS_PART,))
