"""Rotated boxes: the engine's exact polygon IoU against shapely's (GEOS), and its matching
against the reference matcher whose rotated pairs take shapely's IoU.

Pairs are drawn touching, nested, identical, of size 0, turned by any angle and near an IoU
threshold; images mix rotated and axis-aligned boxes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt
import pytest
from helpers import reference as ref
from helpers.examples import examples
from helpers.reference import GtBox, PredBox, RefImage
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine.evaluation import Thresholds, evaluate
from handler.engine.matching import candidate_pairs
from handler.engine.rotated import convex_quads, corners, envelope, overlap_bound, rectangles, rotated_iou

PROPERTY = settings(
    deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
Box = tuple[float, float, float, float]
ANGLES = st.one_of(st.sampled_from((0.0, 90.0, 180.0, -45.0, 30.0, 360.0)), st.floats(-360, 360))
# How far from a threshold or from each other IoUs must lie for two exact computations to agree on
# a comparison (the engine's and GEOS's IoU differ by rounding, ~1e-15).
MARGIN = 1e-9


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    x, y = draw(st.floats(0, 100)), draw(st.floats(0, 100))
    zero = draw(st.integers(0, 15)) == 0
    w, h = (0.0, 0.0) if zero else (draw(st.floats(0.5, 60)), draw(st.floats(0.5, 60)))
    return (x, y, x + w, y + h)


@st.composite
def related(draw: st.DrawFn, box: Box) -> Box:
    """Another box: the same, nested in it, touching it, moved a little, or anywhere."""
    x0, y0, x1, y1 = box
    kind = draw(st.sampled_from(("same", "nested", "touching", "moved", "anywhere")))
    if kind == "same":
        return box
    if kind == "nested":
        shrink = draw(st.floats(0, 0.45))
        dx, dy = (x1 - x0) * shrink, (y1 - y0) * shrink
        return (x0 + dx, y0 + dy, x1 - dx, y1 - dy)
    if kind == "touching":
        return (x1, y0, x1 + (x1 - x0), y1)
    if kind == "moved":
        dx, dy = draw(st.floats(-5, 5)), draw(st.floats(-5, 5))
        return (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
    return draw(boxes())


def _area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _ours(a: Box, angle_a: float, b: Box, angle_b: float) -> float:
    xa, xb = np.array([a], dtype=np.float64), np.array([b], dtype=np.float64)
    pa, pb = corners(xa, np.array([angle_a])), corners(xb, np.array([angle_b]))
    return float(rotated_iou(pa, pb, np.array([_area(a)]), np.array([_area(b)]))[0])


@settings(PROPERTY, max_examples=examples(120))
@given(st.data())
def test_the_polygon_iou_is_shapely_s(data: st.DataObject) -> None:
    a = data.draw(boxes())
    b = data.draw(related(a))
    angle_a = data.draw(ANGLES)
    angle_b = data.draw(st.one_of(st.just(angle_a), ANGLES))
    want = ref.polygon_iou(a, angle_a, b, angle_b)
    assert _ours(a, angle_a, b, angle_b) == pytest.approx(want, abs=MARGIN)
    # The bound the matching skips pairs by holds the overlap, and the envelopes hold the boxes.
    turned = np.array([angle_a]), np.array([angle_b])
    pa, pb = corners(np.array([a]), turned[0]), corners(np.array([b]), turned[1])
    overlap = ref.polygon_overlap(a, angle_a, b, angle_b)
    assert overlap_bound(pa, pb, *turned)[0] >= overlap * (1 - MARGIN) - MARGIN
    low, high = envelope(np.array([a]), turned[0])[0].reshape(2, 2)
    assert (pa[0] >= low - MARGIN).all() and (pa[0] <= high + MARGIN).all()


def test_known_pairs() -> None:
    square = (0.0, 0.0, 10.0, 10.0)
    assert _ours(square, 45, square, 45) == pytest.approx(1.0, abs=1e-12)
    assert _ours(square, 0, square, 90) == pytest.approx(1.0, abs=1e-12)
    # A square and itself turned 45 degrees: the overlap is a regular octagon.
    octagon = 200 * (math.sqrt(2) - 1)  # side s = 10(√2 - 1), area 2(1 + √2)s²
    assert _ours(square, 0, square, 45) == pytest.approx(octagon / (200 - octagon), rel=1e-12)
    assert _ours(square, 30, (10.0, 0.0, 20.0, 10.0), 0) > 0  # turned, it reaches its neighbour
    assert _ours(square, 0, (10.0, 0.0, 20.0, 10.0), 0) == 0.0  # touching: no overlap
    assert _ours((5.0, 5.0, 5.0, 5.0), 30, square, 0) == 0.0  # size 0


@settings(PROPERTY, max_examples=examples(100))
@given(boxes(), ANGLES, st.integers(0, 3), st.booleans())
def test_the_rectangle_of_written_corners_is_the_box(
    box: Box, angle: float, start: int, backwards: bool
) -> None:
    """Corners written from any corner, either way round, give the same rectangle back."""
    xyxy = np.array([box], dtype=np.float64)
    quad = np.roll(corners(xyxy, np.array([angle])), -start, axis=1)
    quad = quad[:, ::-1] if backwards else quad
    back, turned = rectangles(quad)
    assert sorted(np.round(corners(back, turned)[0], 6).tolist()) == sorted(np.round(quad[0], 6).tolist())
    assert _area(tuple(back[0].tolist())) == pytest.approx(_area(box), rel=1e-9, abs=1e-9)


def test_an_upright_rectangle_of_corners_is_exactly_its_box() -> None:
    quad = np.array([[[10.0, 20.0], [110.0, 20.0], [110.0, 220.0], [10.0, 220.0]]])
    xyxy, angle = rectangles(quad[:, ::-1])
    assert xyxy.tolist() == [[10.0, 20.0, 110.0, 220.0]] and angle.tolist() == [0.0]


def test_the_envelope_holds_the_turned_box() -> None:
    xyxy = np.array([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 4.0, 2.0]])
    np.testing.assert_allclose(
        envelope(xyxy, np.array([45.0, 0.0])),
        [[5 - 50**0.5, 5 - 50**0.5, 5 + 50**0.5, 5 + 50**0.5], [0, 0, 4, 2]],
    )


@st.composite
def pixel_quads(draw: st.DrawFn, near: npt.NDArray[np.float64] | None = None) -> npt.NDArray[np.float64]:
    """(4, 2) corners in pixels, in any order: a turned rectangle, or any four points (near `near`)."""
    if draw(st.booleans()):
        box = (
            draw(boxes())
            if near is None
            else draw(related(tuple(near.min(axis=0)) + tuple(near.max(axis=0))))
        )
        quad = corners(np.array([box], dtype=np.float64), np.array([draw(ANGLES)]))[0]
    else:
        quad = np.array(
            draw(st.lists(st.tuples(st.floats(0, 150), st.floats(0, 150)), min_size=4, max_size=4))
        )
    order = draw(st.permutations(range(4)))
    return quad[list(order)]


def _quad_table(quads: npt.NDArray[np.float64]) -> BoxTable:
    """A table of quadrilaterals in 0-1 as the builder keeps them: beside the rectangle holding each."""
    convex = convex_quads(quads)
    xyxy, angle = rectangles(convex)
    return BoxTable.build(xyxy, [0] * len(quads), [0] * len(quads), angle=angle, quads=convex)


@settings(PROPERTY, max_examples=examples(150))
@given(st.data(), st.floats(16, 4000), st.floats(16, 4000))
def test_the_iou_of_quadrilaterals_in_0_1_is_shapely_s_in_pixels(
    data: st.DataObject, width: float, height: float
) -> None:
    """Scaling both quadrilaterals by an image's size leaves their IoU as it is: scored in 0-1, a
    pair of quadrilaterals of an image of unknown size has shapely's IoU of them in pixels (four
    points not written round a convex shape are the convex one holding them)."""
    import shapely

    a = data.draw(pixel_quads())
    b = data.draw(pixel_quads(a))
    shape_a, shape_b = (shapely.MultiPoint(q.tolist()).convex_hull for q in (a, b))
    union = shape_a.union(shape_b).area
    want = shape_a.intersection(shape_b).area / union if union > 0 else 0.0
    size = np.array([width, height])
    pairs = candidate_pairs(_quad_table(a[None] / size), _quad_table(b[None] / size), 1, 0.0)
    got = float(pairs.iou[0]) if len(pairs) else 0.0
    assert got == pytest.approx(want, abs=MARGIN)
    assert _quad_table(a[None] / size).area[0] * width * height == pytest.approx(shape_a.area, abs=1e-6)


@st.composite
def mixed_images(draw: st.DrawFn) -> RefImage:
    """Images where rotated and axis-aligned boxes meet: predictions near a GT box, turned a little."""
    gt = []
    for _ in range(draw(st.integers(0, 5))):
        gt.append(
            GtBox(draw(boxes()), draw(st.integers(0, 1)), draw(st.sampled_from((0.0, 0.0, 15.0, -70.0))))
        )
    preds = []
    for _ in range(draw(st.integers(0, 7))):
        if gt and draw(st.booleans()):
            target = draw(st.sampled_from(gt))
            box, angle = (
                draw(related(target.xyxy)),
                target.angle + draw(st.sampled_from((0.0, 3.0, -8.0, 40.0))),
            )
        else:
            box, angle = draw(boxes()), draw(ANGLES)
        preds.append(PredBox(box, draw(st.integers(0, 1)), draw(st.sampled_from((0.2, 0.6, 0.9))), angle))
    return RefImage(tuple(gt), tuple(preds))


def _tables(images: list[RefImage]) -> tuple[BoxTable, BoxTable]:
    gts = [(i, g) for i, im in enumerate(images) for g in im.gt]
    preds = [(i, p) for i, im in enumerate(images) for p in im.preds]
    gt = BoxTable.build(
        np.array([g.xyxy for _, g in gts], dtype=np.float64).reshape(-1, 4),
        [g.class_id for _, g in gts],
        [i for i, _ in gts],
        angle=[g.angle for _, g in gts],
    )
    pred = BoxTable.build(
        np.array([p.xyxy for _, p in preds], dtype=np.float64).reshape(-1, 4),
        [p.class_id for _, p in preds],
        [i for i, _ in preds],
        confidence=[p.confidence for _, p in preds],
        angle=[p.angle for _, p in preds],
    )
    return gt, pred


def _clear_of_ties(images: list[RefImage], thresholds: tuple[float, ...]) -> bool:
    """No IoU of an image within MARGIN of a threshold or of another of its IoUs: where rounding
    cannot change a comparison, both computations must match the same way."""
    for image in images:
        values = sorted(ref.box_iou(g, p) for g in image.gt for p in image.preds)
        values = [v for v in values if v > MARGIN]
        if any(abs(v - t) < MARGIN for v in values for t in thresholds):
            return False
        if any(b - a < MARGIN for a, b in itertools.pairwise(values)):
            return False
    return True


@settings(PROPERTY, max_examples=examples(50))
@given(st.lists(mixed_images(), max_size=8), st.sampled_from((0.3, 0.5)), st.sampled_from((0.0, 0.5)))
def test_matching_rotated_and_upright_boxes_counts_as_the_reference(
    images: list[RefImage], iou_min: float, threshold: float
) -> None:
    iou_perfect = 0.8
    assume(_clear_of_ties(images, (iou_min, iou_perfect)))
    expected = ref.evaluate(images, threshold, iou_min, iou_perfect)
    gt, pred = _tables(images)
    evaluation = evaluate(gt, pred, len(images), Thresholds(iou_min, iou_perfect, threshold))
    assert evaluation.tally.count_dict() == expected.counts
    kept, match = np.flatnonzero(pred.confidence >= threshold), evaluation.outcomes.match
    got = sorted(
        (int(kept[k]), int(match.pred_match[k]), float(match.pred_iou[k]))
        for k in np.flatnonzero(match.pred_match >= 0).tolist()
    )
    gt_first = np.cumsum([0, *(len(im.gt) for im in images)])
    pred_first = np.cumsum([0, *(len(im.preds) for im in images)])
    want = sorted(
        (int(pred_first[i] + m.pred), int(gt_first[i] + m.gt), m.iou)
        for i, result in enumerate(expected.images)
        for m in result.matches
    )
    assert [(p, g) for p, g, _ in got] == [(p, g) for p, g, _ in want]
    assert [iou for *_, iou in got] == pytest.approx([iou for *_, iou in want], abs=MARGIN)
