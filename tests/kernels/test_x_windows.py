"""The windows kernel against a plain reading of what a window is: per GT box, the predictions of
its image whose x_min lies within its bounds; the order sorted by (image, x_min, row)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.kernels.x_windows import x_windows

x = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_each_window_holds_its_image_predictions_within_its_bounds(data: st.DataObject) -> None:
    n_images = data.draw(st.integers(1, 4))
    n_pred, n_gt = data.draw(st.integers(0, 60)), data.draw(st.integers(0, 8))
    pred_x0 = np.array(data.draw(st.lists(x, min_size=n_pred, max_size=n_pred)), dtype=np.float64)
    image = st.integers(0, n_images - 1)
    pred_image = np.array(data.draw(st.lists(image, min_size=n_pred, max_size=n_pred)), dtype=np.int64)
    gt_image = np.array(data.draw(st.lists(image, min_size=n_gt, max_size=n_gt)), dtype=np.int64)
    low = np.array(data.draw(st.lists(x, min_size=n_gt, max_size=n_gt)), dtype=np.float64)
    width = st.sampled_from([0.0, 1.0, 5.0, 1e7])
    high = low + np.array(data.draw(st.lists(width, min_size=n_gt, max_size=n_gt)))
    order, start, stop = x_windows(pred_x0, pred_image, gt_image, (low, high), n_images)
    assert order.tolist() == sorted(range(n_pred), key=lambda p: (pred_image[p], pred_x0[p], p))
    for g in range(n_gt):
        image_of_g = {p for p in range(n_pred) if pred_image[p] == gt_image[g]}
        inside = {p for p in image_of_g if low[g] <= pred_x0[p] <= high[g]}
        assert set(order[start[g] : stop[g]].tolist()) == inside


def test_an_image_outside_the_images_is_refused() -> None:
    one = np.zeros(1)
    with pytest.raises(IndexError, match="not one of the 2 images"):
        x_windows(one, np.array([2]), np.array([0]), (one, one), 2)
    with pytest.raises(IndexError):
        x_windows(one, np.array([0]), np.array([-1]), (one, one), 2)
