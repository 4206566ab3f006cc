"""The window pairs kernel against `engine/iou.py`'s IoU over every pair of the windows, bit for bit,
on drawn boxes (NaN, infinities, zero and inverted sizes included) and drawn windows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from handler.boxes import box_area
from handler.engine.iou import iou_of_overlap, overlap
from handler.kernels.window_pairs import Windows, window_pairs

Floats = npt.NDArray[np.float64]
coordinate = st.one_of(
    st.integers(-4, 12).map(float),
    st.floats(-1e3, 1e3, allow_nan=False),
    st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]),
)


@st.composite
def drawn(draw: st.DrawFn) -> tuple[Floats, Floats, Windows, float]:
    n_gt, n_pred = draw(st.integers(1, 6)), draw(st.integers(0, 8))
    gt = draw(arrays(np.float64, (n_gt, 4), elements=coordinate))
    pred = draw(arrays(np.float64, (n_pred, 4), elements=coordinate))
    rows = np.array(draw(st.permutations(range(n_pred))), dtype=np.int64)
    start = np.array([draw(st.integers(0, n_pred)) for _ in range(n_gt)], dtype=np.int64)
    count = np.array([draw(st.integers(0, n_pred - s)) for s in start], dtype=np.int64)
    min_height = np.array([draw(st.sampled_from([-np.inf, 0.0, 1.5])) for _ in range(n_gt)])
    first = draw(st.integers(0, n_gt - 1))
    keep = draw(st.sampled_from([-np.inf, 0.0, 0.1, 0.5]))
    return gt, pred, Windows(rows, start, count, min_height, first, draw(st.integers(first, n_gt))), keep


def _oracle(gt: Floats, pred: Floats, w: Windows, keep: float) -> tuple[list[int], list[int], Floats]:
    g = np.repeat(np.arange(w.first, w.last), w.count[w.first : w.last])
    windows = [np.arange(w.start[r], w.start[r] + w.count[r]) for r in range(w.first, w.last)]
    q = np.concatenate([np.empty(0), *windows]).astype(np.int64)
    a, b = gt[g], pred[w.rows[q]]
    height = overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3])
    iou = iou_of_overlap(overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2]), height, box_area(a), box_area(b))
    with np.errstate(invalid="ignore"):
        kept = (height >= w.min_height[g]) & (iou >= keep)
    return g[kept].tolist(), q[kept].tolist(), iou[kept]


@settings(max_examples=400, deadline=None)
@given(drawn())
def test_the_kernel_keeps_the_pairs_and_ious_numpy_gives(case: tuple[Floats, Floats, Windows, float]) -> None:
    gt, pred, windows, keep = case
    with np.errstate(invalid="ignore", over="ignore"):
        got = window_pairs((gt, box_area(gt)), (pred, box_area(pred)), windows, keep)
        expected = _oracle(gt, pred, windows, keep)
    assert got[0].tolist() == expected[0] and got[1].tolist() == expected[1]
    assert got[2].tobytes() == expected[2].tobytes()


def test_a_window_past_the_predictions_is_refused() -> None:
    boxes = np.array([[0.0, 0.0, 1.0, 1.0]])
    area = box_area(boxes)
    one = np.ones(1, dtype=np.int64)
    for rows, start in ((np.zeros(1, dtype=np.int64), one), (np.array([3]), np.zeros(1, dtype=np.int64))):
        windows = Windows(rows, start, one, np.zeros(1), 0, 1)
        with pytest.raises(IndexError, match="leaves"):
            window_pairs((boxes, area), (boxes, area), windows, 0.0)
