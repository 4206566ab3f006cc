"""A new finisher is one module (its part, its choice of images, its function) and one line in
`FINISHERS`: the pipeline runs it, one extra pass serves it and the sketches together, its part is
stored with the report and read back by key."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np
import orjson
import pytest
from helpers.paths import EXAMPLES

import handler.execution.image_pass
import handler.pipeline
import handler.report.finishers
from handler.datasets import PairedBoxes
from handler.engine import Thresholds
from handler.engine.analyses.per_image import PER_IMAGE
from handler.execution import ExecutionOptions
from handler.execution.shards import FileShard, PairedShard
from handler.inputs import NodeInputs, parse_inputs
from handler.metric import load_outcomes
from handler.pipeline import run
from handler.report.finishers import FINISHERS
from handler.report.publish import ReportPart, read_report_part
from handler.sections.finishing import MERGED, ExactPass, Finished, Finisher, Finishing, Merged
from handler.storage.local import LocalStore

# --- the finisher's module: pre-labels, the kept predictions of every image ---

PRE_LABELS_PART: Final = ReportPart("kept_predictions", "kept_predictions.jsonl", "application/x-ndjson")


def every_image(merged: Merged) -> frozenset[str]:
    return frozenset(merged.state.of(PER_IMAGE).asset_ids)


def pre_labels(finishing: Finishing) -> Finished:
    lines = []
    for passed, image in finishing.images.images(finishing.chosen):
        kept = passed.evaluation.pred
        on = np.flatnonzero(kept.image == image)
        boxes = [
            {"label": passed.paired.class_names[c], "box": b, "confidence": s}
            for c, b, s in zip(
                kept.class_id[on].tolist(), kept.xyxy[on].tolist(), kept.confidence[on].tolist(), strict=True
            )
        ]
        lines.append(orjson.dumps({"asset_id": passed.paired.asset_ids[image], "boxes": boxes}))
    return Finished({PRE_LABELS_PART: b"\n".join(lines) + b"\n"})


PRE_LABELS = Finisher("pre-labels", ExactPass(every_image), pre_labels, (PRE_LABELS_PART,))

# --- and its one registration line ---


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler.report.finishers, "FINISHERS", (*FINISHERS, PRE_LABELS))


def _inputs() -> NodeInputs:
    return parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )


def test_a_registered_finisher_writes_its_part_from_the_one_pass(
    registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[int] = []
    shard_boxes = handler.execution.image_pass.shard_boxes

    def counted(task: PairedShard | FileShard) -> tuple[PairedBoxes, Thresholds]:
        read.append(id(task))
        return shard_boxes(task)

    monkeypatch.setattr(handler.execution.image_pass, "shard_boxes", counted)
    store = LocalStore(tmp_path / "store")
    result = run(_inputs(), store, execution=ExecutionOptions(workers=2))
    assert result.findings.execution.shards > 1

    lines = read_report_part(store, result.outputs.report_id, PRE_LABELS_PART).splitlines()
    assert len(lines) == result.findings.dataset.images
    kept = sum(len(orjson.loads(line)["boxes"]) for line in lines)
    assert kept == result.findings.dataset.predictions_kept
    rows = load_outcomes(result.outputs.report_id, store=store)
    assert kept == int(np.count_nonzero(rows["pred_index"] >= 0))
    # The sketches and the pre-labels asked for a pass; each shard was read once for both.
    assert len(read) == len(set(read)) == result.findings.execution.shards
    assert result.page["sketch_of"], "the sketches came from the same pass"
    manifest = orjson.loads(
        (tmp_path / "store" / "reports" / result.outputs.report_id / "manifest.json").read_bytes()
    )
    assert "kept_predictions.jsonl" in manifest["parts"]


def test_every_finisher_that_needs_a_pass_shares_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two finishers choosing images: the pass covers their union, and each finds its own in it."""
    seen: dict[str, list[str]] = {}

    def chooser(name: str, pick: slice) -> Finisher:
        def choose(merged: Merged) -> frozenset[str]:
            return frozenset(sorted(every_image(merged))[pick])

        def finish(finishing: Finishing) -> Finished:
            seen[name] = [p.paired.asset_ids[i] for p, i in finishing.images.images(finishing.chosen)]
            seen[f"{name} pass"] = [a for p in finishing.images.shards for a in p.paired.asset_ids]
            return Finished()

        return Finisher(name, ExactPass(choose), finish)

    monkeypatch.setattr(
        handler.report.finishers,
        "FINISHERS",
        (chooser("first", slice(0, 3)), chooser("last", slice(-2, None))),
    )
    store = LocalStore(tmp_path / "store")
    run(_inputs(), store)
    assert len(seen["first"]) == 3 and len(seen["last"]) == 2
    assert sorted(seen["first pass"]) == sorted(seen["last pass"]) == sorted(seen["first"] + seen["last"])


def test_a_part_no_finisher_declared_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def sneaky(finishing: Finishing) -> Finished:
        return Finished({PRE_LABELS_PART: b"x"})

    monkeypatch.setattr(
        handler.report.finishers, "FINISHERS", (*FINISHERS, Finisher("sneaky", MERGED, sneaky))
    )
    store = LocalStore(tmp_path / "store")
    with pytest.raises(KeyError, match=r"sneaky.*did not declare.*kept_predictions"):
        run(_inputs(), store)
    assert not (tmp_path / "store" / "reports").exists() or not any(
        (tmp_path / "store" / "reports").iterdir()
    )


def test_the_sketched_images_are_those_the_page_lists(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    result = run(_inputs(), store)
    findings = result.findings
    listed = {row.asset_id for row in findings.images_with_most_work}
    listed |= {box.asset_id for box in findings.suspected_gt_errors.listed}
    listed |= {pair.asset_id for pair in findings.near_misses.listed}
    assert set(result.page["sketch_of"]) == listed


class _CurrentPhase:
    """A PhaseLog that knows which phase is running."""

    def __init__(self) -> None:
        self.current: str | None = None

    def start(self, phase: str) -> None:
        self.current = phase

    def __call__(self, phase: str, seconds: float) -> None:
        self.current = None


def test_a_finisher_with_a_phase_runs_in_that_phase_the_others_with_the_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pictures are a phase of their own ("draw images"): their time is not the evaluation's."""
    assert {finisher.phase for finisher in FINISHERS} - {None} <= set(handler.pipeline.PHASES)
    watch, seen = _CurrentPhase(), []

    def note(finishing: Finishing) -> Finished:
        seen.append(watch.current)
        return Finished()

    timed = Finisher("timed", MERGED, note, phase="draw images")
    monkeypatch.setattr(
        handler.report.finishers, "FINISHERS", (*FINISHERS, timed, Finisher("untimed", MERGED, note))
    )
    run(_inputs(), LocalStore(tmp_path / "store"), log=watch)
    assert seen == ["match and score", "draw images"]


def test_a_part_of_a_finisher_in_a_phase_of_its_own_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every pass's parts reach the report, not only the first pass's (the pictures' pass too)."""

    def late(finishing: Finishing) -> Finished:
        return Finished({PRE_LABELS_PART: b"drawn\n"})

    drawn = Finisher("drawn", MERGED, late, (PRE_LABELS_PART,), phase="draw images")
    monkeypatch.setattr(handler.report.finishers, "FINISHERS", (*FINISHERS, drawn))
    store = LocalStore(tmp_path / "store")
    result = run(_inputs(), store)
    assert read_report_part(store, result.outputs.report_id, PRE_LABELS_PART) == b"drawn\n"
