"""Small hand-made and generated box tables shared by the engine and report tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine import Thresholds

THRESHOLDS = Thresholds(iou_min=0.3, iou_perfect=0.8, confidence_threshold=0.5)
CAR, DOG, CAT = 0, 1, 2


def hand_case() -> tuple[BoxTable, BoxTable]:
    gt = BoxTable.build(
        [
            [0, 0, 10, 10],
            [20, 20, 30, 30],
            [40, 40, 50, 50],
            [60, 60, 70, 70],
            [80, 80, 90, 90],
            [0, 0, 100, 100],
        ],
        [CAR, CAR, DOG, CAR, DOG, CAT],
        [0, 0, 0, 0, 0, 1],
    )
    pred = BoxTable.build(
        [
            [0, 0, 10, 10],
            [20, 20, 30, 35],
            [40, 40, 50, 50],
            [60, 60, 70, 62.5],
            [200, 200, 210, 210],
            [0, 0, 10, 10],
            [0, 0, 100, 100],
        ],
        [CAR, CAR, CAT, CAR, CAR, CAR, CAT],
        [0, 0, 0, 0, 0, 0, 1],
        confidence=[0.9, 0.8, 0.7, 0.65, 0.6, 0.2, 0.4],
    )
    return gt, pred


@st.composite
def grid_tables(draw: st.DrawFn) -> tuple[BoxTable, BoxTable, int]:
    """Random boxes on a 6-step grid (ties and bound hits are common), images interleaved."""
    n_images = draw(st.integers(1, 4))

    def table(n: int) -> BoxTable:
        corners = np.array(draw(st.lists(st.integers(0, 6), min_size=4 * n, max_size=4 * n))).reshape(n, 4)
        low, high = corners[:, :2], corners[:, 2:]
        xyxy = np.concatenate([np.minimum(low, high), np.maximum(low, high)], axis=1)
        return BoxTable.build(
            xyxy,
            draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            draw(st.lists(st.integers(0, n_images - 1), min_size=n, max_size=n)),
            confidence=draw(st.lists(st.sampled_from((0.0, 0.25, 0.5, 0.75, 1.0)), min_size=n, max_size=n)),
        )

    return table(draw(st.integers(0, 12))), table(draw(st.integers(0, 14))), n_images
