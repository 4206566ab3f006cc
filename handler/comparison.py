"""Compare two prediction sets on the same GT: `prelabel-eval compare` and `handler.compare`.

Both sets run through the node's code path (`read_and_plan`, `evaluate_plan`) against the same
GT with the same inputs; nothing is written: the shards keep no outcome lines. Images scored
in both runs are paired by asset id.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from handler.engine.analyses import COMPARE_ONLY
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.analyses.image_classes import IMAGE_CLASSES
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.paired import paired_bootstrap, paired_images
from handler.engine.timecost import TimeCosts
from handler.errors import InputError
from handler.execution import Evaluated, ExecutionOptions, evaluate_plan, read_and_plan
from handler.inputs import parse_inputs
from handler.report.findings import Comparison, RunFigures, build_comparison
from handler.storage import Store
from handler.storage.local import LocalStore


def _evaluate(raw: Mapping[str, str], store: Store, execution: ExecutionOptions) -> Evaluated:
    """One run's merged state (no outcome lines: nothing is published), with what only compare reads."""
    return evaluate_plan(read_and_plan(parse_inputs(raw), store, execution, COMPARE_ONLY), None)


@contextmanager
def _store(store: Store | None) -> Iterator[Store]:
    """The given store, else an empty temporary folder (dataset ids name nothing in it)."""
    if store is not None:
        yield store
        return
    with tempfile.TemporaryDirectory(prefix="prelabel-compare-") as folder:
        yield LocalStore(Path(folder))


def compare(
    gt: str,
    pred_a: str,
    pred_b: str,
    *,
    inputs: Mapping[str, str] | None = None,
    costs: TimeCosts | None = None,
    store: Store | None = None,
    execution: ExecutionOptions | None = None,
) -> Comparison:
    """Which of two prediction sets leaves less correction work on `gt`, with paired intervals.

    `inputs` are further node inputs for both runs (IOU_MIN, CONFIDENCE_THRESHOLD, PRED_FORMAT...);
    `store` resolves dataset ids (default: a temporary folder, for paths and s3:// URIs).
    """
    costs, execution = costs or TimeCosts(), execution or ExecutionOptions()
    with _store(store) as used:
        a, b = (
            _evaluate({**(inputs or {}), "GT_DATASET": gt, "PRED_DATASET": pred}, used, execution)
            for pred in (pred_a, pred_b)
        )
    images_a, images_b = a.state.of(PER_IMAGE), b.state.of(PER_IMAGE)
    rows_a, rows_b = paired_images(images_a.asset_ids, images_b.asset_ids)
    if not len(rows_a):
        raise InputError("the two prediction sets share no scored image: nothing to compare")
    counts = images_a.counts[rows_a], images_b.counts[rows_b]
    paired = paired_bootstrap(*counts, costs)
    runs = tuple(
        RunFigures(
            run.pred.source,
            image_counts,
            run.state.of(PER_CLASS),
            run.state.of(CONFIDENCE_SWEEP).sweep,
            run.state.of(IMAGE_CLASSES).rows(),
            rows,
        )
        for run, image_counts, rows in zip((a, b), counts, (rows_a, rows_b), strict=True)
    )
    thresholds = parse_inputs({**(inputs or {}), "GT_DATASET": gt, "PRED_DATASET": pred_a}).thresholds
    return build_comparison(a.gt.source, (runs[0], runs[1]), paired, costs, (thresholds, same_outcomes(a, b)))


def same_outcomes(a: Evaluated, b: Evaluated) -> bool:
    """A and B give every image the same outcome counts, and every class the same counts at every
    sweep threshold: as far as the evaluation can see, the same predictions."""
    images_a, images_b = a.state.of(PER_IMAGE), b.state.of(PER_IMAGE)
    sweep_a, sweep_b = a.state.of(CONFIDENCE_SWEEP).by_class, b.state.of(CONFIDENCE_SWEEP).by_class
    return (
        images_a.asset_ids == images_b.asset_ids
        and np.array_equal(images_a.counts, images_b.counts)
        and sweep_a.names == sweep_b.names
        and np.array_equal(sweep_a.counts, sweep_b.counts)
    )
