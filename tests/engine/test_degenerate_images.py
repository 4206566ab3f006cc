"""Degenerate images: boxes drawn on top of or inside each other, by the thousand.

Tie blocks (identical boxes: every pair has one IoU) are matched whole in a round, exactly as the
reference takes them one pair at a time; an image whose pairs exceed the bound is found without
enumerating more than the bound, and an image of many boxes that do not overlap is not one.
"""

from __future__ import annotations

import numpy as np
from helpers import reference as ref
from helpers.engine import match_boxes
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine.crowded import (
    CROWDED_PAIRS,
    HEAVY_PAIRS,
    ROTATED_PAIR_COST,
    ROTATED_PROBLEM,
    RUN_PAIRS,
    RUN_PROBLEM,
    crowded_images,
)
from handler.engine.matching import candidate_pairs, count_pairs, greedy_match

FLOOR = 0.1


def _table(xyxy: np.ndarray, image: np.ndarray | None = None) -> BoxTable:
    xyxy = np.asarray(xyxy, dtype=float).reshape(-1, 4)
    table = BoxTable.build(xyxy, np.zeros(len(xyxy)), np.zeros(len(xyxy)))
    return table if image is None else table.with_columns(image=np.asarray(image, dtype=np.int64))


# A few shapes on a small integer grid: many boxes identical, many IoUs equal (mirror images too),
# and some without area (a line or a point: no IoU above 0 with anything).
shapes = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 6), st.integers(0, 6)).map(
        lambda s: (float(s[0]), float(s[1]), float(s[0] + s[2]), float(s[1] + s[3]))
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=examples(300), deadline=None)
@given(shapes, st.data())
def test_boxes_drawn_many_times_match_as_the_reference(pool: list[ref.Box], data: st.DataObject) -> None:
    pick = st.lists(st.sampled_from(pool), max_size=30)
    gt, pred = data.draw(pick), data.draw(pick)
    match = match_boxes(_table(np.array(gt)), _table(np.array(pred)), 1, FLOOR)
    candidates = [
        ref.Match(pred=p, gt=g, iou=value)
        for p, pred_box in enumerate(pred)
        for g, gt_box in enumerate(gt)
        if (value := ref.iou(gt_box, pred_box)) >= FLOOR
    ]
    expected = {(m.gt, m.pred) for m in ref.greedy(candidates)}
    assert {(g, int(p)) for g, p in enumerate(match.gt_match.tolist()) if p >= 0} == expected


def test_identical_boxes_are_matched_in_order() -> None:
    """600 by 600 identical boxes (360,000 pairs of one IoU): the k-th prediction takes the k-th
    GT box, and the surplus predictions stay unmatched."""
    box = [[10.0, 10.0, 50.0, 50.0]]
    gt, pred = _table(np.repeat(box, 600, axis=0)), _table(np.repeat(box, 700, axis=0))
    pairs = candidate_pairs(gt, pred, 1, FLOOR)
    assert len(pairs) == 600 * 700
    match = greedy_match(pairs, len(gt), len(pred))
    assert match.gt_match.tolist() == list(range(600))
    assert match.pred_match.tolist() == [*range(600), *[-1] * 100]


def _crowded(gt: BoxTable, pred: BoxTable, images: int) -> list[int]:
    found: list[int] = crowded_images(gt, pred, images).images.tolist()
    return found


def test_an_image_past_the_bound_is_crowded_and_the_others_are_not() -> None:
    """Image 1 holds 1,001 identical boxes on each side (1,002,001 pairs), image 0 a thousand
    (1,000,000: at the bound, not past it), image 2 ten thousand boxes on each side that do not
    overlap each other (a product of 100 million, but 10,000 pairs)."""
    box = np.array([[0.0, 0.0, 10.0, 10.0]])
    grid = np.stack(np.meshgrid(np.arange(100) * 20.0, np.arange(100) * 20.0), axis=-1).reshape(-1, 2)
    spread = np.concatenate((grid, grid + 10), axis=1)
    sides = [np.repeat(box, 1000, axis=0), np.repeat(box, 1001, axis=0), spread]
    image = np.repeat([0, 1, 2], [len(s) for s in sides])
    table = _table(np.concatenate(sides), image)
    assert CROWDED_PAIRS == 1000 * 1000
    assert _crowded(table, table, 3) == [1]


def test_nested_boxes_are_crowded_by_their_overlaps() -> None:
    """Concentric boxes a hair apart, every two of them overlapping: 1,200 GT boxes are crowded by
    their own near-duplicate pairs with a single prediction; 1,200 predictions on one GT box are
    1,200 pairs; 1,100 on each side are 1,210,000 pairs."""
    side = 1000 + np.arange(1200) * 0.01
    nested = _table(np.stack((-side, -side, side, side), axis=1))
    one = nested[np.arange(1)]
    fewer = nested[np.arange(1100)]
    assert _crowded(nested, one, 1) == [0]
    assert _crowded(one, nested, 1) == []
    assert _crowded(fewer, fewer, 1) == [0]


def test_heavy_images_share_the_runs_budget_in_image_order() -> None:
    """Ten images of 999 GT and 1,000 predicted identical boxes: each under the image's bound, but
    each about 2,000,000 pairs with its GT's own: the first spends the run's budget, the nine
    after it are skipped for it; an image of few pairs after them is matched."""
    box = np.array([[0.0, 0.0, 10.0, 10.0]])
    gt = _table(np.repeat(box, 999 * 10 + 3, axis=0), np.r_[np.repeat(np.arange(10), 999), [10] * 3])
    pred = _table(np.repeat(box, 1000 * 10 + 3, axis=0), np.r_[np.repeat(np.arange(10), 1000), [10] * 3])
    assert HEAVY_PAIRS < 999 * 1000 + 999 * 999 <= RUN_PAIRS
    skipped = crowded_images(gt, pred, 11)
    assert skipped.images.tolist() == list(range(1, 10)) and set(skipped.reasons) == {RUN_PROBLEM}


def test_rotated_pairs_are_counted_by_their_envelopes_and_cost_more() -> None:
    """1,000 identical boxes turned 10 degrees a side: a million pairs by their envelopes, counted
    without clipping a polygon, each costing ROTATED_PAIR_COST: the image is crowded."""
    box = np.repeat([[100.0, 100.0, 300.0, 300.0]], 1000, axis=0)
    turned = _table(box).with_columns(angle=np.full(1000, 10.0))
    found = count_pairs(turned, turned, FLOOR, CROWDED_PAIRS)
    assert (found.upright, found.rotated) == (0, CROWDED_PAIRS)
    skipped = crowded_images(turned, turned, 1)
    assert skipped.images.tolist() == [0] and skipped.reasons == (ROTATED_PROBLEM,)
    few = turned[np.arange(CROWDED_PAIRS // ROTATED_PAIR_COST // 1000)]  # 31 a side: 961 pairs
    assert not len(crowded_images(few, few, 1))
