"""The greedy matching kernel against the literal greedy of `tests/helpers/reference.py`, on drawn
pairs with many ties (IoUs from a few values), whole and at every confidence level in one pass."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from helpers import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.engine.matching import CandidatePairs, greedy_match, greedy_order, matched_by_level
from handler.kernels.greedy_match import taken_at

N_GT, N_PRED = 6, 7


@st.composite
def drawn_pairs(draw: st.DrawFn) -> tuple[CandidatePairs, npt.NDArray[np.int8]]:
    """Distinct (GT, prediction) pairs, their IoUs from four values, and each pair's level."""
    keys = draw(st.lists(st.integers(0, N_GT * N_PRED - 1), unique=True, max_size=N_GT * N_PRED))
    n = len(keys)
    iou = draw(st.lists(st.sampled_from([0.25, 0.5, 0.75, 1.0]), min_size=n, max_size=n))
    level = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    pairs = CandidatePairs(
        np.array(keys, dtype=np.int64) // N_PRED, np.array(keys, dtype=np.int64) % N_PRED, np.array(iou)
    )
    return pairs, np.array(level, dtype=np.int8)


def _reference(pairs: CandidatePairs) -> set[tuple[int, int, float]]:
    candidates = [
        ref.Match(pred=int(p), gt=int(g), iou=float(v))
        for g, p, v in zip(pairs.gt, pairs.pred, pairs.iou, strict=True)
    ]
    return {(m.gt, m.pred, m.iou) for m in ref.greedy(candidates)}


def _found(gt_match: npt.NDArray[np.int64], pred_iou: npt.NDArray[np.float64]) -> set[tuple[int, int, float]]:
    rows = np.flatnonzero(gt_match >= 0)
    return {(int(g), int(gt_match[g]), float(pred_iou[gt_match[g]])) for g in rows}


@settings(max_examples=300, deadline=None)
@given(drawn_pairs())
def test_the_kernel_takes_the_pairs_the_reference_takes(
    drawn: tuple[CandidatePairs, npt.NDArray[np.int8]],
) -> None:
    pairs, _ = drawn
    match = greedy_match(pairs, N_GT, N_PRED)  # unordered: sorted first
    assert _found(match.gt_match, match.pred_iou) == _reference(pairs)
    matched = np.flatnonzero(match.pred_match >= 0)
    assert (match.gt_match[match.pred_match[matched]] == matched).all()
    assert np.isnan(match.pred_iou[match.pred_match < 0]).all()


@settings(max_examples=300, deadline=None)
@given(drawn_pairs())
def test_each_level_matches_the_pairs_above_it(drawn: tuple[CandidatePairs, npt.NDArray[np.int8]]) -> None:
    pairs, level = drawn
    order = greedy_order(pairs)
    ordered = CandidatePairs(pairs.gt[order], pairs.pred[order], pairs.iou[order])
    taken = matched_by_level(ordered, N_GT, N_PRED, level[order])
    for above in range(4):
        at = np.flatnonzero(taken & np.uint32(1 << above))
        found = zip(ordered.gt[at].tolist(), ordered.pred[at].tolist(), ordered.iou[at].tolist(), strict=True)
        assert set(found) == _reference(pairs[level > above]), above
    assert not (taken >> np.uint32(4)).any(), "no pair is taken where no prediction is kept"


def test_an_index_outside_its_table_is_refused_before_anything_is_written() -> None:
    gt, pred = np.array([0, 5]), np.array([0, 0])
    with pytest.raises(IndexError, match="outside its table"):
        taken_at(gt, pred, 5, 1)
    with pytest.raises(IndexError):
        taken_at(pred, np.array([0, -1]), 1, 1)
    with pytest.raises(IndexError):
        taken_at(gt, pred, 0, 0)
    with pytest.raises(ValueError, match="equally long"):
        taken_at(gt, pred[:1], 6, 1)
