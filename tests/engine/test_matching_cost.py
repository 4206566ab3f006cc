"""Greedy matching on adversarial chains, against the reference.

A chain lays GT boxes and predictions alternately along x, each overlapping only its two
neighbours of the other kind. When the IoU falls along the chain, each pair taken decides the
next one's; equal gaps on an integer grid make every IoU tie instead, so the tie-breaks
(prediction, then GT, in table order) decide every pair.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from helpers import reference as ref
from helpers.engine import match_boxes
from helpers.reference import Box

from handler.boxes import BoxTable
from handler.engine.matching import CandidatePairs, greedy_match

Gaps = Literal["rising", "falling", "equal", "zigzag"]
Order = Literal["chain", "reversed", "shuffled"]

WIDTH = 100.0
IOU_MIN = 0.1  # boxes three apart in a chain are farther apart than this allows


def _gaps(kind: Gaps, n: int, rng: np.random.Generator) -> np.ndarray:
    """Gaps between neighbours, in [30, 45): adjacent IoU about 0.38-0.54, none beyond."""
    step = np.arange(n - 1) / n * 15
    if kind == "rising":
        return 30 + step
    if kind == "falling":
        return 45 - step - 1e-3
    if kind == "equal":
        return np.full(n - 1, 40.0)  # integer coordinates: every adjacent IoU is the same
    return np.where(np.arange(n - 1) % 2 == 0, 30.0, 44.0) + np.round(rng.random(n - 1) * 4)


def _chain(n: int, gaps: Gaps, y: float, rng: np.random.Generator) -> list[Box]:
    x = np.concatenate(([0.0], np.cumsum(_gaps(gaps, n, rng))))
    return [(float(a), y, float(a) + WIDTH, y + WIDTH) for a in x]


def _image(chains: int, n: int, gaps: Gaps, order: Order, seed: int) -> tuple[list[Box], list[Box]]:
    """GT boxes and predictions of several chains (apart in y), rows in `order`."""
    rng = np.random.default_rng(seed)
    gt: list[Box] = []
    pred: list[Box] = []
    for c in range(chains):
        boxes = _chain(n, gaps, c * 2 * WIDTH, rng)
        gt += boxes[c % 2 :: 2]  # chains alternately start with a GT box and a prediction
        pred += boxes[1 - c % 2 :: 2]
    for boxes in (gt, pred):
        if order == "reversed":
            boxes.reverse()
        elif order == "shuffled":
            rng.shuffle(boxes)
    return gt, pred


def _reference(gt: list[Box], pred: list[Box]) -> set[tuple[int, int, float]]:
    candidates = [
        ref.Match(pred=p, gt=g, iou=value)
        for p, pb in enumerate(pred)
        for g, gb in enumerate(gt)
        if (value := ref.iou(gb, pb)) >= IOU_MIN
    ]
    return {(m.gt, m.pred, m.iou) for m in ref.greedy(candidates)}


def _table(boxes: list[Box]) -> BoxTable:
    return BoxTable.build(np.array(boxes).reshape(-1, 4), np.zeros(len(boxes)), np.zeros(len(boxes)))


@pytest.mark.parametrize("order", ["chain", "reversed", "shuffled"])
@pytest.mark.parametrize("gaps", ["rising", "falling", "equal", "zigzag"])
def test_chains_match_as_the_reference(gaps: Gaps, order: Order) -> None:
    for seed, (chains, n) in enumerate([(1, 2), (1, 3), (1, 201), (3, 80), (5, 41)]):
        gt, pred = _image(chains, n, gaps, order, seed)
        match = match_boxes(_table(gt), _table(pred), 1, IOU_MIN, budget=1 + seed * 13)
        gt_rows = np.flatnonzero(match.gt_match >= 0)
        pred_rows = match.gt_match[gt_rows]
        ious = match.pred_iou[pred_rows]
        found = set(zip(gt_rows.tolist(), pred_rows.tolist(), ious.tolist(), strict=True))
        assert found == _reference(gt, pred), (chains, n)


def _falling_chain_pairs(m: int) -> CandidatePairs:
    """Pairs of a chain GT 0 - pred 0 - GT 1 - pred 1 - ... with IoU falling."""
    edge = np.arange(2 * m, dtype=np.int64)
    return CandidatePairs((edge + 1) // 2, edge // 2, 1 - edge / (2 * m + 1))


def test_a_falling_chain_is_matched_along_itself() -> None:
    m = 500
    match = greedy_match(_falling_chain_pairs(m), m + 1, m)
    assert match.pred_match.tolist() == list(range(m))
    assert match.gt_match.tolist() == [*range(m), -1]
