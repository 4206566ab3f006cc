"""Compare two prediction sets on the same GT: `prelabel-eval compare` and `handler.compare`.

Both sets run through the node's front door (`FrontDoor.read_against`, `process_plan`) against one
GT, opened and read once, with the inputs parsed once; nothing is written: the shards keep no ledger.
Images scored in both runs are paired by asset id.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from msgspec.structs import replace

from handler.datasets.side import OpenSide, open_side
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.analyses.gt_outcomes import GT_OUTCOMES
from handler.engine.analyses.image_classes import IMAGE_CLASSES
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.paired import paired_bootstrap, paired_images
from handler.engine.timecost import TimeCosts
from handler.engine.transitions import Transitions, box_transitions
from handler.errors import InputError
from handler.execution import Evaluated, ExecutionOptions
from handler.features import ANALYSES, COMPARE_ONLY
from handler.front_door import FrontDoor
from handler.inputs import NodeInputs, arguments, parse_inputs
from handler.report.findings import Comparison, RunFigures, build_comparison
from handler.report.findings.compare_findings import PairedImages, transitions_section
from handler.storage import Store
from handler.storage.local import LocalStore


def _evaluate(door: FrontDoor, gt: OpenSide, pred: OpenSide) -> Evaluated:
    """One run's merged state (no ledger: nothing is published), with what only compare reads."""
    return door.process_plan(door.read_against(gt, pred, (*ANALYSES, *COMPARE_ONLY)))


def _on_masks(run: Evaluated) -> bool:
    return bool(run.gt.masks and run.pred.masks)


def _one_shape(
    runs: tuple[Evaluated, Evaluated], on_boxes: Callable[[int], Evaluated]
) -> tuple[tuple[Evaluated, Evaluated], str | None]:
    """Both runs on one shape: where only one scored masks, it is scored again on its boxes (a mask
    IoU against a box IoU would compare the annotations, not the models), and a line says so."""
    a, b = runs
    if _on_masks(a) == _on_masks(b):
        return runs, None
    masked = 0 if _on_masks(a) else 1
    names = ("A", "B") if masked == 0 else ("B", "A")
    note = (
        f"{names[0]} carries instance masks and {names[1]} does not: both are compared on their boxes "
        "(SCORE_ON boxes); compare two sets of masks to score masks."
    )
    again = on_boxes(masked)
    return ((again, b) if masked == 0 else (a, again)), note


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
    given = arguments.instance("inputs", inputs, (Mapping, type(None)), "a dict of node inputs or None") or {}
    texts = {key: arguments.text(f"inputs[{key!r}]", value) for key, value in given.items()}
    gt, pred_a, pred_b = (
        arguments.text(name, value) for name, value in (("gt", gt), ("pred_a", pred_a), ("pred_b", pred_b))
    )
    arguments.instance("costs", costs, (TimeCosts, type(None)), "a TimeCosts or None")
    arguments.instance("store", store, (Store, type(None)), "a Store or None")
    arguments.instance("execution", execution, (ExecutionOptions, type(None)), "ExecutionOptions or None")
    parsed = parse_inputs({**texts, "GT_DATASET": gt, "PRED_DATASET": pred_a})
    return compare_parsed(parsed, pred_b, costs=costs, store=store, execution=execution)


def compare_parsed(
    inputs: NodeInputs,
    pred_b: str,
    *,
    costs: TimeCosts | None = None,
    store: Store | None = None,
    execution: ExecutionOptions | None = None,
) -> Comparison:
    """`compare` of inputs already parsed: `inputs.pred` is set A, `pred_b` set B, read as A is."""
    return compare_runs(inputs, pred_b, costs=costs, store=store, execution=execution)[0]


def compare_runs(
    inputs: NodeInputs,
    pred_b: str,
    *,
    costs: TimeCosts | None = None,
    store: Store | None = None,
    execution: ExecutionOptions | None = None,
) -> tuple[Comparison, Transitions]:
    """`compare_parsed`, and every GT box's outcome under A and B side by side (`--transitions`)."""
    door = FrontDoor.of_inputs(inputs, costs, execution)
    with _store(store) as used:
        gt = open_side(inputs.gt, used)
        preds = (inputs.pred, replace(inputs.pred, reference=pred_b))
        first = tuple(_evaluate(door, gt, open_side(pred, used)) for pred in preds)
        boxes_door = replace(door, score_on="boxes")
        (a, b), shape_note = _one_shape(
            (first[0], first[1]), lambda run: _evaluate(boxes_door, gt, open_side(preds[run], used))
        )
    images_a, images_b = a.state.of(PER_IMAGE), b.state.of(PER_IMAGE)
    rows_a, rows_b = paired_images(images_a.asset_ids, images_b.asset_ids)
    if not len(rows_a):
        raise InputError("the two prediction sets share no scored image: nothing to compare")
    counts = images_a.counts[rows_a], images_b.counts[rows_b]
    seconds = door.costs_on(a.gt, a.pred, b.pred)  # both runs scored on masks: a mask's seconds
    paired = paired_bootstrap(*counts, seconds)
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
    context = (inputs.thresholds, same_outcomes(a, b))
    moved = box_transitions(a.state.of(GT_OUTCOMES).joined(), b.state.of(GT_OUTCOMES).joined(), seconds)
    shown = transitions_section(
        moved, PairedImages([images_a.asset_ids[i] for i in rows_a.tolist()], rows_a), counts
    )
    found = build_comparison(a.gt.source, (runs[0], runs[1]), paired, seconds, context, shown, shape_note)
    return found, moved


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
