"""The ledger's rows as the user reads them: a stored chunk (`engine.ledger`) with the report's
verdicts on each row (is it pre-labeled, is its GT suspected), as named columns.

The columns, in order, are the ledger's documented layout (docs/report.md, "The ledger"); every
format prints them, and `load_outcomes` gives them as numpy arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec
import numpy as np
import orjson

from handler.boxes import FloatArray
from handler.engine.evaluation import keep_mask
from handler.engine.gt_errors import KINDS
from handler.engine.ledger import LedgerChunk
from handler.engine.outcomes import OUTCOMES, Outcome
from handler.report.json_lines import Field, Number, Text

# The layout printed (the stored chunks' LEDGER_VERSION is theirs): a column added is a new version.
TABLE_VERSION: Final = 1
UNITS: Final = ("pixels", "fractions")
SIDES: Final = ("gt", "pred")
XYWH: Final = ("x", "y", "w", "h")
Table = dict[str, Field]

if TYPE_CHECKING:
    from handler.report.findings import Recommendation


class ReportVerdicts(msgspec.Struct, frozen=True):
    """What the report decided that each row shows: the recommendation (which threshold pre-labels
    each class), and whether the GT suspects are withheld (another reading explains the misses)."""

    recommended: Recommendation
    suspects_withheld: bool

    @classmethod
    def of_findings(cls, findings_json: bytes) -> ReportVerdicts:
        from handler.report.findings import Recommendation

        findings: Any = orjson.loads(findings_json)
        recommended = Recommendation.model_validate(findings["recommendation"])
        return cls(recommended, findings["suspected_gt_errors"]["withheld"] is not None)

    def class_thresholds(self, class_names: list[str]) -> FloatArray:
        """Per class, the recommended policy's threshold (NaN: the class is drawn, not pre-labeled)."""
        from handler.report.exports import Policy
        from handler.report.exports.pre_labels import class_thresholds

        return class_thresholds(self.recommended, class_names, Policy())


def _box(columns: dict[str, Any], side: str) -> Table:
    """A side's box: left, top, width, height and angle, null where the row has no such box."""
    xywh, none = columns[f"{side}_xywh"], columns[f"{side}_index"] < 0
    fields: Table = {f"{side}_{name}": Number(xywh[:, i]) for i, name in enumerate(XYWH)}
    fields[f"{side}_angle"] = Number(columns[f"{side}_angle"], none)
    return fields


def outcome_table(chunk: LedgerChunk, verdicts: ReportVerdicts) -> Table:
    """The chunk's rows as the ledger's named columns (each a `Text` or `Number` column)."""
    c = chunk.columns
    pred_class = c["pred_class"]
    thresholds = verdicts.class_thresholds(chunk.class_names)
    pre_labeled = (pred_class >= 0) & keep_mask(
        c["confidence"], thresholds[np.maximum(pred_class, 0)] if len(thresholds) else np.nan
    )
    suspect = np.full(len(chunk), -1) if verdicts.suspects_withheld else c["suspect"]
    return {
        "asset_id": Text(chunk.asset_ids, c["image"]),
        "gt_index": Number(c["gt_index"], c["gt_index"] < 0),
        "pred_index": Number(c["pred_index"], c["pred_index"] < 0),
        "gt_class": Text(chunk.class_names, c["gt_class"]),
        "pred_class": Text(chunk.class_names, pred_class),
        **_box(c, "gt"),
        **_box(c, "pred"),
        "units": Text(UNITS, c["fractions"].astype(np.int64)),
        "iou": Number(c["iou"]),
        "confidence": Number(c["confidence"]),
        "outcome": Text(OUTCOMES, c["outcome"]),  # outcome codes index Outcome
        "action": Text([o.action for o in Outcome], c["outcome"]),
        "suspected_gt_error": Text(KINDS, suspect),
        "pre_labeled": Number(pre_labeled),
    }


COLUMNS: Final = (
    "asset_id",
    "gt_index",
    "pred_index",
    "gt_class",
    "pred_class",
    *(f"{side}_{name}" for side in SIDES for name in (*XYWH, "angle")),
    "units",
    "iou",
    "confidence",
    "outcome",
    "action",
    "suspected_gt_error",
    "pre_labeled",
)
