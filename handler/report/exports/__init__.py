"""Files for other tools.

- Built by a finisher once the run is merged and stored with its report: routing.json,
  class_map.json (a new one: handler/report/finishers/__init__.py says how).
- Written by `prelabel-eval export` from a stored report: the pre-labels a policy keeps
  (`pre_labels`), in a labeling tool's import format. A new target is one module defining an
  `ExportTarget` (its `files(pre_labels, out, image_root)` gives each file's content) and one line
  in `EXPORT_TARGETS` (`targets.py`: the writers load with it, not with this package).

The per-box ledger and the pre-label candidates are what a shard writes itself, chunk by
chunk, so their encoding lives below execution (`handler.engine.ledger`,
`handler.engine.pre_label_boxes`).

The finishers import their modules themselves: importing this package (the CLI lists the targets
on every start) loads no report model."""

from handler.report.exports.pre_labels import (
    MASK_SHAPES,
    POLICIES,
    ExportTarget,
    Policy,
    PolicyName,
    PreLabels,
    lowest_thresholds,
    pre_labels,
)

__all__ = [
    "MASK_SHAPES",
    "POLICIES",
    "ExportTarget",
    "Policy",
    "PolicyName",
    "PreLabels",
    "lowest_thresholds",
    "pre_labels",
]
