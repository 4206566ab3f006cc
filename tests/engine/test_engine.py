"""The vectorised engine (contract §5-7) against the naive reference in `tests/helpers/reference.py`.

Random images live on a small integer grid so that exact IoU ties, IoU exactly at a bound,
zero-area boxes and confidences exactly at the threshold are common, not rare: about 10,000
random images per run (hypothesis-drawn, seeded-bulk and float-coordinate ones), each run
through both engine entry points, with several chunk budgets and with the rows of the
images interleaved. Hypothesis is derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pytest
from helpers import reference as ref
from helpers.engine import match_boxes, paired_iou, pairwise_iou
from helpers.examples import examples
from helpers.reference import Box, GtBox, Match, PredBox, RefImage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine import (
    GRADES,
    OUTCOMES,
    Outcome,
    Tally,
    Thresholds,
    assign_outcomes,
    assistance_score,
    evaluate,
    grade,
)
from handler.engine.exactsum import ExactSum
from handler.engine.matching import PAIR_BUDGET, CandidatePairs, candidate_pairs, greedy_match

# Deterministic for CI: same examples on every run, no example database.
PROPERTY = settings(
    max_examples=examples(60),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

IOU_MINS = (0.1, 0.2, 0.3, 0.4, 0.5)
IOU_PERFECTS = (0.6, 0.7, 0.8, 0.9, 0.95)
CONFIDENCES = (0.0, 0.25, 0.5, 0.75, 1.0)
BUDGETS = (PAIR_BUDGET, 1, 7)  # one chunk; one GT box per chunk; a few GT boxes per chunk
GRID = 7  # coordinates are integers in [0, GRID]


# ---------------------------------------------------------------------------------------
# Running the engine on reference images
# ---------------------------------------------------------------------------------------


def _owners(sizes: Sequence[int], labels: Sequence[int] | None) -> list[tuple[int, int]]:
    """(image, index in image) of each table row, rows in the order of `labels`.

    `labels` is a permutation of the image labels of all boxes (an interleaving of the
    images that keeps each image's own order); None means sorted by image.
    """
    if labels is None:
        labels = [image for image, size in enumerate(sizes) for _ in range(size)]
    following = [0] * len(sizes)
    owners = []
    for image in labels:
        owners.append((image, following[image]))
        following[image] += 1
    assert following == list(sizes)
    return owners


def _tables(
    images: Sequence[RefImage],
    gt_labels: Sequence[int] | None = None,
    pred_labels: Sequence[int] | None = None,
) -> tuple[BoxTable, list[tuple[int, int]], BoxTable, list[tuple[int, int]]]:
    gt_owner = _owners([len(im.gt) for im in images], gt_labels)
    pred_owner = _owners([len(im.preds) for im in images], pred_labels)
    gts = [images[i].gt[j] for i, j in gt_owner]
    preds = [images[i].preds[j] for i, j in pred_owner]
    gt = BoxTable.build(
        xyxy=np.array([g.xyxy for g in gts], dtype=np.float64).reshape(-1, 4),
        class_id=[g.class_id for g in gts],
        image=[i for i, _ in gt_owner],
    )
    pred = BoxTable.build(
        xyxy=np.array([p.xyxy for p in preds], dtype=np.float64).reshape(-1, 4),
        class_id=[p.class_id for p in preds],
        image=[i for i, _ in pred_owner],
        confidence=[p.confidence for p in preds],
    )
    return gt, gt_owner, pred, pred_owner


@dataclass(frozen=True)
class EngineRun:
    images: list[ref.ImageResult]  # matches sorted by prediction
    tally: Tally


def run_engine(
    images: Sequence[RefImage],
    threshold: float,
    iou_min: float,
    iou_perfect: float,
    budget: int = PAIR_BUDGET,
    gt_labels: Sequence[int] | None = None,
    pred_labels: Sequence[int] | None = None,
    path: Literal["evaluate", "match_boxes"] = "evaluate",
) -> EngineRun:
    """The engine on reference images, its answer put back per image and box.

    `path` "evaluate" is the node's own entry point (`handler.engine.evaluate`: the confidence
    filter, pairs once down to the near-miss floor, matching of the kept predictions);
    "match_boxes" filters here and calls `match_boxes` + `assign_outcomes` + `Tally.of`.
    """
    gt, gt_owner, pred_all, pred_owner = _tables(images, gt_labels, pred_labels)
    kept_rows = np.flatnonzero(pred_all.confidence >= threshold)
    if path == "evaluate":
        thresholds = Thresholds(iou_min, iou_perfect, threshold)
        evaluation = evaluate(gt, pred_all, len(images), thresholds, budget=budget)
        assert evaluation.kept.tolist() == (pred_all.confidence >= threshold).tolist()
        outcomes, tally = evaluation.outcomes, evaluation.tally
    else:
        pred = pred_all[pred_all.confidence >= threshold]
        match = match_boxes(gt, pred, len(images), iou_min, budget=budget)
        outcomes = assign_outcomes(gt, pred, match, iou_perfect)
        tally = Tally.of(outcomes)
    match = outcomes.match

    matches: list[list[Match]] = [[] for _ in images]
    gt_out: list[list[str]] = [[""] * len(im.gt) for im in images]
    pred_out: list[list[str | None]] = [[None] * len(im.preds) for im in images]
    for row, (i, j) in enumerate(gt_owner):
        gt_out[i][j] = OUTCOMES[outcomes.gt_outcome[row]]
    for k, row in enumerate(kept_rows.tolist()):
        i, j = pred_owner[row]
        pred_out[i][j] = OUTCOMES[outcomes.pred_outcome[k]]
        partner = int(match.pred_match[k])
        if partner >= 0:
            gi, gj = gt_owner[partner]
            assert gi == i, "matched across images"
            assert match.gt_match[partner] == k, "gt_match and pred_match disagree"
            matches[i].append(Match(pred=j, gt=gj, iou=float(match.pred_iou[k])))
        else:
            assert np.isnan(match.pred_iou[k])
    assert int(np.count_nonzero(match.gt_match >= 0)) == int(np.count_nonzero(match.pred_match >= 0))
    results = [
        ref.ImageResult(tuple(sorted(m, key=lambda x: x.pred)), tuple(g), tuple(p))
        for m, g, p in zip(matches, gt_out, pred_out, strict=True)
    ]
    return EngineRun(results, tally)


def _by_pred(result: ref.ImageResult) -> ref.ImageResult:
    return ref.ImageResult(
        tuple(sorted(result.matches, key=lambda m: m.pred)),
        result.gt_outcomes,
        result.pred_outcomes,
    )


def assert_agrees(run: EngineRun, expected: ref.Evaluation) -> None:
    for index, (got, want) in enumerate(zip(run.images, expected.images, strict=True)):
        assert got == _by_pred(want), f"image {index}"
    tally = run.tally
    assert tally.count_dict() == expected.counts
    assert tally.same_class_iou == ExactSum.of(np.array(expected.same_class_ious))
    assert tally.mean_iou == expected.mean_iou
    assert tally.assistance_score == float(expected.score)
    assert tally.grade == expected.grade


# ---------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------


def _span(draw: st.DrawFn) -> tuple[float, float]:
    # zero length about one time in sixteen, otherwise anything that fits on the grid
    if draw(st.integers(0, 15)) == 3:
        start = draw(st.integers(0, GRID))
        return float(start), float(start)
    start, end = sorted(draw(st.lists(st.integers(0, GRID), min_size=2, max_size=2, unique=True)))
    return float(start), float(end)


@st.composite
def grid_boxes(draw: st.DrawFn) -> Box:
    x0, x1 = _span(draw)
    y0, y1 = _span(draw)
    return (x0, y0, x1, y1)


@st.composite
def near(draw: st.DrawFn, box: Box) -> Box:
    """`box` with each coordinate moved by at most one grid step (so IoU ties are common)."""
    step = st.sampled_from((0, 0, 1, -1))
    moved = [min(max(c + draw(step), 0.0), float(GRID)) for c in box]
    x0, x1 = sorted((moved[0], moved[2]))
    y0, y1 = sorted((moved[1], moved[3]))
    return (x0, y0, x1, y1)


@st.composite
def grid_images(draw: st.DrawFn) -> RefImage:
    classes = st.integers(0, 1)
    gt = tuple(GtBox(draw(grid_boxes()), draw(classes)) for _ in range(draw(st.integers(0, 6))))
    preds = []
    for _ in range(draw(st.integers(0, 8))):
        if gt and draw(st.integers(0, 3)) > 0:
            box = draw(near(draw(st.sampled_from(gt)).xyxy))
        else:
            box = draw(grid_boxes())
        preds.append(PredBox(box, draw(classes), draw(st.sampled_from(CONFIDENCES))))
    return RefImage(gt, tuple(preds))


@st.composite
def float_images(draw: st.DrawFn) -> RefImage:
    """Arbitrary float coordinates at several scales and offsets (negative ones too): few ties,
    but IoU must still agree bit for bit and no pair may be lost by the engine's pruning."""
    scale = draw(st.sampled_from((1.0, 1e-3, 1e3, 1e6)))
    offset = draw(st.sampled_from((0.0, -500.0, 1e6, 1e9)))
    unit = st.floats(0.0, 1000.0, allow_nan=False, allow_infinity=False)

    def box() -> Box:
        x0, x1 = sorted((offset + scale * draw(unit), offset + scale * draw(unit)))
        y0, y1 = sorted((offset + scale * draw(unit), offset + scale * draw(unit)))
        return (x0, y0, x1, y1)

    def jitter(b: Box) -> Box:
        step = st.floats(-20.0, 20.0, allow_nan=False)
        moved = [c + scale * draw(step) for c in b]
        x0, x1 = sorted((moved[0], moved[2]))
        y0, y1 = sorted((moved[1], moved[3]))
        return (x0, y0, x1, y1)

    gt = tuple(GtBox(box(), draw(st.integers(0, 1))) for _ in range(draw(st.integers(0, 5))))
    preds = []
    for _ in range(draw(st.integers(0, 6))):
        near_gt = len(gt) > 0 and draw(st.booleans())
        xyxy = jitter(draw(st.sampled_from(gt)).xyxy) if near_gt else box()
        preds.append(PredBox(xyxy, draw(st.integers(0, 1)), draw(st.floats(0.0, 1.0))))
    return RefImage(gt, tuple(preds))


@dataclass(frozen=True)
class Case:
    images: list[RefImage]
    threshold: float
    iou_min: float
    iou_perfect: float
    gt_labels: list[int]
    pred_labels: list[int]


@st.composite
def cases(draw: st.DrawFn, images: st.SearchStrategy[RefImage]) -> Case:
    drawn = [draw(images) for _ in range(draw(st.integers(0, 20)))]
    gt_labels = [i for i, im in enumerate(drawn) for _ in im.gt]
    pred_labels = [i for i, im in enumerate(drawn) for _ in im.preds]
    return Case(
        images=drawn,
        threshold=draw(st.sampled_from(CONFIDENCES)),
        iou_min=draw(st.sampled_from(IOU_MINS)),
        iou_perfect=draw(st.sampled_from(IOU_PERFECTS)),
        # a random interleaving of the images' rows: the engine must not rely on sorted input
        gt_labels=draw(st.permutations(gt_labels)),
        pred_labels=draw(st.permutations(pred_labels)),
    )


def _random_span(rng: random.Random) -> tuple[float, float]:
    if rng.randrange(16) == 0:
        start = rng.randint(0, GRID)
        return float(start), float(start)
    start, end = sorted(rng.sample(range(GRID + 1), 2))
    return float(start), float(end)


def _random_box(rng: random.Random) -> Box:
    (x0, x1), (y0, y1) = _random_span(rng), _random_span(rng)
    return (x0, y0, x1, y1)


def _random_image(rng: random.Random) -> RefImage:
    """The same kind of image as `grid_images`, drawn from a seeded generator (cheaper)."""
    gt = tuple(GtBox(_random_box(rng), rng.randint(0, 1)) for _ in range(rng.randint(0, 6)))
    preds = []
    for _ in range(rng.randint(0, 8)):
        if gt and rng.randrange(4) > 0:
            moved = [min(max(c + rng.choice((0, 0, 1, -1)), 0.0), float(GRID)) for c in rng.choice(gt).xyxy]
            x0, x1 = sorted((moved[0], moved[2]))
            y0, y1 = sorted((moved[1], moved[3]))
            box = (x0, y0, x1, y1)
        else:
            box = _random_box(rng)
        preds.append(PredBox(box, rng.randint(0, 1), rng.choice(CONFIDENCES)))
    return RefImage(gt, tuple(preds))


def seeded_case(seed: int, n_images: int) -> Case:
    rng = random.Random(seed)
    images = [_random_image(rng) for _ in range(n_images)]
    gt_labels = [i for i, im in enumerate(images) for _ in im.gt]
    pred_labels = [i for i, im in enumerate(images) for _ in im.preds]
    rng.shuffle(gt_labels)
    rng.shuffle(pred_labels)
    return Case(
        images=images,
        threshold=rng.choice(CONFIDENCES),
        iou_min=rng.choice(IOU_MINS),
        iou_perfect=rng.choice(IOU_PERFECTS),
        gt_labels=gt_labels,
        pred_labels=pred_labels,
    )


# ---------------------------------------------------------------------------------------
# Property tests: engine == reference
# ---------------------------------------------------------------------------------------


def _check_case(case: Case) -> None:
    expected = ref.evaluate(case.images, case.threshold, case.iou_min, case.iou_perfect)
    args = (case.images, case.threshold, case.iou_min, case.iou_perfect)
    paths: tuple[Literal["evaluate", "match_boxes"], ...] = ("evaluate", "match_boxes")
    for path in paths:
        for budget in BUDGETS:
            assert_agrees(run_engine(*args, budget, path=path), expected)
        interleaved = run_engine(*args, 7, gt_labels=case.gt_labels, pred_labels=case.pred_labels, path=path)
        assert_agrees(interleaved, expected)


def _check_greedy_needs_no_presorted_pairs(case: Case, seed: int) -> None:
    """`greedy_match` sorts pairs that are not in the greedy order itself."""
    gt, _, pred, _ = _tables(case.images, case.gt_labels, case.pred_labels)
    pairs = candidate_pairs(gt, pred, len(case.images), case.iou_min)
    shuffled = np.random.default_rng(seed).permutation(len(pairs))
    one = greedy_match(pairs, len(gt), len(pred))
    shuffled_pairs = CandidatePairs(pairs.gt[shuffled], pairs.pred[shuffled], pairs.iou[shuffled])
    other = greedy_match(shuffled_pairs, len(gt), len(pred))
    assert one.pred_match.tolist() == other.pred_match.tolist()
    assert one.gt_match.tolist() == other.gt_match.tolist()


def _check_iou(images: Sequence[RefImage]) -> None:
    for image in images:
        gt = np.array([g.xyxy for g in image.gt], dtype=np.float64).reshape(-1, 4)
        pred = np.array([p.xyxy for p in image.preds], dtype=np.float64).reshape(-1, 4)
        got = pairwise_iou(gt, pred).tolist()
        want = [[ref.iou(g.xyxy, p.xyxy) for p in image.preds] for g in image.gt]
        assert got == want  # bit for bit


@PROPERTY
@given(cases(grid_images()))
def test_engine_matches_reference_on_grid(case: Case) -> None:
    _check_iou(case.images)
    _check_case(case)
    _check_greedy_needs_no_presorted_pairs(case, len(case.images))


@settings(PROPERTY, max_examples=examples(100))
@given(st.integers(0, 2**32 - 1))
def test_engine_matches_reference_on_seeded_bulk(seed: int) -> None:
    """20 images per example from a seeded generator: many images for little drawing cost."""
    case = seeded_case(seed, 20)
    _check_iou(case.images)
    _check_case(case)
    _check_greedy_needs_no_presorted_pairs(case, seed)


@settings(PROPERTY, max_examples=examples(40))
@given(cases(float_images()))
def test_engine_matches_reference_on_float_boxes(case: Case) -> None:
    _check_iou(case.images)
    _check_case(case)


@settings(PROPERTY, max_examples=examples(30))
@given(cases(grid_images()), st.data())
def test_tally_of_shards_adds_up_to_one_shot(case: Case, data: st.DataObject) -> None:
    one_shot = run_engine(case.images, case.threshold, case.iou_min, case.iou_perfect).tally
    n = len(case.images)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    bounds = [0, *cuts, n]
    shards = [
        run_engine(case.images[a:b], case.threshold, case.iou_min, case.iou_perfect).tally
        for a, b in itertools.pairwise(bounds)
    ]
    summed = functools.reduce(Tally.__add__, shards, Tally.zero())
    reversed_sum = functools.reduce(Tally.__add__, reversed(shards), Tally.zero())
    for tally in (summed, reversed_sum):
        assert tally.count_dict() == one_shot.count_dict()
        assert tally.mean_iou == one_shot.mean_iou  # exactly, whatever the shard order
        assert tally.assistance_score == one_shot.assistance_score
        assert tally.grade == one_shot.grade
        assert tally.shares() == one_shot.shares()


# ---------------------------------------------------------------------------------------
# Hand-computed cases
# ---------------------------------------------------------------------------------------


def _one_image(
    gt: Sequence[tuple[Box, int]],
    preds: Sequence[tuple[Box, int]],
    iou_min: float = 0.3,
    iou_perfect: float = 0.8,
) -> tuple[EngineRun, ref.Evaluation]:
    image = RefImage(tuple(GtBox(b, c) for b, c in gt), tuple(PredBox(b, c) for b, c in preds))
    expected = ref.evaluate([image], 0.5, iou_min, iou_perfect)
    assert_agrees(run_engine([image], 0.5, iou_min, iou_perfect, path="match_boxes"), expected)
    run = run_engine([image], 0.5, iou_min, iou_perfect)
    assert_agrees(run, expected)
    return run, expected


def test_well_placed_box_of_wrong_class_is_class_confused() -> None:
    run, _ = _one_image([((0, 0, 10, 10), 0)], [((0, 0, 10, 10), 1)])
    assert run.images[0].gt_outcomes == ("class_confused",)
    assert run.images[0].pred_outcomes == ("class_confused",)
    assert run.tally.count_dict() == {
        "correct": 0,
        "shifted": 0,
        "class_confused": 1,
        "false_positive": 0,
        "false_negative": 0,
        "total": 1,
    }
    assert run.tally.assistance_score == 0.5
    assert run.tally.mean_iou is None  # class-confused pairs are not in the mean IoU


def test_iou_exactly_at_iou_min_is_a_candidate() -> None:
    # [0,0,10,10] vs [0,0,10,5]: intersection 50, union 100, IoU exactly 0.5
    run, _ = _one_image([((0, 0, 10, 10), 0)], [((0, 0, 10, 5), 0)], iou_min=0.5)
    assert run.images[0].matches == (Match(0, 0, 0.5),)
    assert run.images[0].gt_outcomes == ("shifted",)
    # 49/100 is below 0.5: no candidate, one false positive and one false negative
    run, _ = _one_image([((0, 0, 100, 100), 0)], [((0, 0, 100, 49), 0)], iou_min=0.5)
    assert run.images[0].matches == ()
    assert run.images[0].pred_outcomes == ("false_positive",)
    assert run.images[0].gt_outcomes == ("false_negative",)


@pytest.mark.parametrize("axis", ["y", "x"])
@pytest.mark.parametrize("bound", [*IOU_MINS, *IOU_PERFECTS])
def test_iou_exactly_at_every_select_option(bound: float, axis: str) -> None:
    """A box of IoU h/100 with [0,0,100,100] lands exactly on the option's float.

    On the x axis the prediction is the right end of the GT box, [100-h, 0, 100, 100]: the
    one place where the engine's x-window for IoU ≥ t is tight (x_min = x_max_gt - t·w_gt).
    """
    height = round(bound * 100)

    def box(h: int) -> Box:
        return (0, 0, 100, h) if axis == "y" else (100 - h, 0, 100, 100)

    exact = pairwise_iou(np.array([[0.0, 0, 100, 100]]), np.array([box(height)], dtype=float))
    assert exact[0, 0] == bound
    gt = [((0, 0, 100, 100), 0)]
    if bound in IOU_MINS:
        run, _ = _one_image(gt, [(box(height), 0)], iou_min=bound, iou_perfect=0.95)
        assert run.images[0].gt_outcomes == ("shifted",)
        run, _ = _one_image(gt, [(box(height - 1), 0)], iou_min=bound, iou_perfect=0.95)
        assert run.images[0].gt_outcomes == ("false_negative",)
    else:
        run, _ = _one_image(gt, [(box(height), 0)], iou_min=0.5, iou_perfect=bound)
        assert run.images[0].gt_outcomes == ("correct",)
        assert run.tally.mean_iou == bound
        run, _ = _one_image(gt, [(box(height - 1), 0)], iou_min=0.5, iou_perfect=bound)
        assert run.images[0].gt_outcomes == ("shifted",)


def test_pairs_at_the_pruning_bound_survive_float_rounding() -> None:
    """Predictions that end where the GT box ends and overlap it by t·w_gt in x (IoU ≈ t).

    In decimal coordinates, some offsets and other images in the tables, the window bound
    x_max_gt - t·w_gt and the IoU are both rounded: every pair the reference finds at
    IoU ≥ t must still be found (the engine's slack; without it about one in ten is lost).
    """
    rng = random.Random(20261129)
    checked = 0
    for _ in range(600):
        t = rng.choice(IOU_MINS)
        n_images = rng.choice((1, 3, 50))
        image = rng.randrange(n_images)
        scale, offset = rng.choice((1, 0.1, 0.01, 1000)), rng.choice((0, 1e3, 1e6, -7.3))
        x0 = offset + rng.randint(0, 100) * scale
        width = rng.randint(1, 100) * scale
        x1 = x0 + width
        pred_x0 = x1 - t * (x1 - x0) if rng.random() < 0.5 else x1 - t * width
        height = rng.choice((1.0, 3.7, 10.0))
        gt_box, pred_box = (x0, 0.0, x1, height), (pred_x0, 0.0, x1, height)
        if ref.iou(gt_box, pred_box) < t:
            continue
        checked += 1
        images = [RefImage() for _ in range(n_images)]
        images[image] = RefImage((GtBox(gt_box, 0),), (PredBox(pred_box, 0),))
        far = (offset - 1000 * scale, 0.0, offset - 999 * scale, 1.0)  # sets the key's origin
        other = (image + 1) % n_images
        images[other] = RefImage(images[other].gt, (*images[other].preds, PredBox(far, 0)))
        expected = ref.evaluate(images, 0.5, t, 0.95)
        assert_agrees(run_engine(images, 0.5, t, 0.95), expected)
        assert_agrees(run_engine(images, 0.5, t, 0.95, path="match_boxes"), expected)
    assert checked > 200


def test_two_predictions_tied_on_one_gt_the_earlier_prediction_wins() -> None:
    top, bottom = (0, 0, 10, 5), (0, 5, 10, 10)  # both IoU 0.5 with the GT
    for first, second in ((top, bottom), (bottom, top)):
        run, _ = _one_image([((0, 0, 10, 10), 0)], [(first, 0), (second, 0)])
        assert run.images[0].matches == (Match(0, 0, 0.5),)
        assert run.images[0].pred_outcomes == ("shifted", "false_positive")


def test_prediction_tied_on_two_gts_the_earlier_gt_wins() -> None:
    # the prediction covers both GT boxes' 100 of its 150: IoU 2/3 with each
    a, b = (0, 0, 10, 10), (0, 5, 10, 15)
    for first, second in ((a, b), (b, a)):
        run, _ = _one_image([(first, 0), (second, 0)], [((0, 0, 10, 15), 0)])
        assert run.images[0].matches == (Match(0, 0, 2 / 3),)
        assert run.images[0].gt_outcomes == ("shifted", "false_negative")


def test_ties_use_input_order_not_table_order_across_images() -> None:
    """Rows of other images in between do not change who comes first in an image."""
    tied = RefImage(
        (GtBox((0, 0, 10, 10), 0),),
        (PredBox((0, 5, 10, 10), 0), PredBox((0, 0, 10, 5), 0)),
    )
    other = RefImage((GtBox((0, 0, 4, 4), 1),), (PredBox((0, 0, 4, 4), 1),))
    images = [other, tied, other]
    expected = ref.evaluate(images, 0.5, 0.3, 0.8)
    run = run_engine(images, 0.5, 0.3, 0.8, gt_labels=[2, 1, 0], pred_labels=[1, 2, 0, 1])
    assert_agrees(run, expected)
    assert run.images[1].matches == (Match(0, 0, 0.5),)


def test_greedy_takes_the_best_pair_first_not_each_predictions_best() -> None:
    # 1-D boxes (full height): A = [0,10], B = [6,14]; P1 = [2,12], P2 = [0,9]
    # P1-A 8/12, P1-B 6/12, P2-A 9/10, P2-B 3/14 (below 0.3).
    # Prediction by prediction, P1 would take A and leave P2 and B unmatched; greedy takes
    # P2-A (0.9) first, then P1-B (0.5).
    a, b = (0, 0, 10, 10), (6, 0, 14, 10)
    p1, p2 = (2, 0, 12, 10), (0, 0, 9, 10)
    run, _ = _one_image([(a, 0), (b, 0)], [(p1, 0), (p2, 0)], iou_min=0.3, iou_perfect=0.8)
    assert run.images[0].matches == (Match(0, 1, 0.5), Match(1, 0, 0.9))
    assert run.images[0].pred_outcomes == ("shifted", "correct")
    assert run.images[0].gt_outcomes == ("correct", "shifted")
    assert run.tally.count(Outcome.FALSE_POSITIVE) == 0
    assert run.tally.mean_iou == (0.5 + 0.9) / 2


def test_a_chain_where_each_pair_taken_decides_the_next() -> None:
    """Each pair taken frees the next one's best partner: the order decides every match.

    IoU (rows P0..P3, columns G0..G4), 1-D boxes of height 10:
        P0  .8    10/11 .8    .143  0
        P1  .538  .769  2/3   .385  0
        P2  .429  .643  .538  .5    0
        P3  0     .053  0     .364  1/7
    Greedy: P0-G1, then P1-G2, then P2-G3, then P3-G4; G0 is left over.
    """
    gt = [(22, 30), (22, 33), (23, 31), (30, 36), (39, 46)]
    preds = [(22, 32), (23, 35), (24, 36), (32, 41)]
    run, _ = _one_image(
        [((x0, 0, x1, 10), 0) for x0, x1 in gt],
        [((x0, 0, x1, 10), 0) for x0, x1 in preds],
        iou_min=0.1,
        iou_perfect=0.9,
    )
    assert run.images[0].matches == (
        Match(0, 1, 10 / 11),
        Match(1, 2, 2 / 3),
        Match(2, 3, 0.5),
        Match(3, 4, 1 / 7),
    )
    assert run.images[0].gt_outcomes == (
        "false_negative",
        "correct",
        "shifted",
        "shifted",
        "shifted",
    )


def test_union_zero_is_iou_zero() -> None:
    point = np.array([[5.0, 5, 5, 5]])
    line = np.array([[5.0, 0, 5, 10]])
    assert paired_iou(point, point).tolist() == [0.0]
    assert paired_iou(line, line).tolist() == [0.0]
    assert pairwise_iou(point, np.array([[0.0, 0, 10, 10]])).tolist() == [[0.0]]
    assert ref.iou((5, 5, 5, 5), (5, 5, 5, 5)) == 0.0
    run, _ = _one_image([((5, 5, 5, 5), 0)], [((5, 5, 5, 5), 0)], iou_min=0.1)
    assert run.images[0].gt_outcomes == ("false_negative",)
    assert run.images[0].pred_outcomes == ("false_positive",)


def test_empty_inputs() -> None:
    assert pairwise_iou(np.empty((0, 4)), np.empty((3, 4))).shape == (0, 3)
    images = [RefImage(), RefImage(gt=(GtBox((0, 0, 1, 1), 0),)), RefImage()]
    for budget in BUDGETS:
        run = run_engine(images, 0.5, 0.3, 0.8, budget)
        assert run.tally.count_dict()["false_negative"] == 1
        assert run.tally.total == 1
        assert run.tally.grade == "Minimal assist"
    run = run_engine([], 0.5, 0.3, 0.8)
    assert run.tally.total == 0
    assert run.tally.assistance_score == 0.0
    assert run.tally.mean_iou is None
    assert run.tally.grade == "Minimal assist"


def test_confidence_equal_to_threshold_is_kept() -> None:
    image = RefImage(
        (GtBox((0, 0, 10, 10), 0),),
        (PredBox((0, 0, 10, 10), 0, 0.5), PredBox((20, 20, 30, 30), 0, 0.4999)),
    )
    run = run_engine([image], 0.5, 0.3, 0.8)
    assert run.images[0].pred_outcomes == ("correct", None)
    assert run.tally.total == 1


# ---------------------------------------------------------------------------------------
# Score and grade: exact bounds
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("correct", "shifted", "confused", "total", "expected_grade", "expected_score"),
    [
        (9, 0, 0, 10, "Production-grade", 0.9),
        (8, 2, 0, 10, "Production-grade", 0.9),
        (8, 0, 2, 10, "Production-grade", 0.9),
        (8, 1, 0, 10, "Strong assist", 0.85),
        (6, 0, 0, 10, "Strong assist", 0.6),
        (5, 2, 0, 10, "Strong assist", 0.6),
        (5, 1, 0, 10, "Partial assist", 0.55),
        (3, 0, 0, 10, "Partial assist", 0.3),
        (0, 3, 3, 10, "Partial assist", 0.3),
        (2, 1, 0, 10, "Minimal assist", 0.25),
        (0, 0, 0, 10, "Minimal assist", 0.0),
        (0, 0, 0, 0, "Minimal assist", 0.0),
        (10, 0, 0, 10, "Production-grade", 1.0),
        # C/T + 0.5·S/T in floats gives 0.8999999999999999 here; exactly it is 0.9
        (21, 3, 0, 25, "Production-grade", 0.9),
        (900_000, 0, 0, 1_000_000, "Production-grade", 0.9),
        (899_999, 1, 0, 1_000_000, "Strong assist", 0.8999995),
    ],
)
def test_grade_bounds_are_inclusive_and_exact(
    correct: int,
    shifted: int,
    confused: int,
    total: int,
    expected_grade: str,
    expected_score: float,
) -> None:
    assert grade(correct, shifted, confused, total) == expected_grade
    assert assistance_score(correct, shifted, confused, total) == expected_score
    assert ref.grade(correct, shifted, confused, total) == expected_grade


def test_grade_names_are_the_four_of_the_spec() -> None:
    assert [name for name, *_ in GRADES] == [name for name, _ in ref.GRADE_BOUNDS]
    assert OUTCOMES == ref.OUTCOME_NAMES


_COUNT = st.integers(0, 10**6)


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """(C, S, X, total) with FP + FN ≥ 0; often exactly on a grade bound or one below."""
    correct, shifted, confused, wrong = (draw(_COUNT) for _ in range(4))
    if draw(st.booleans()):
        # score exactly n/10 (or a half-step below): 2C + S + X = 2·n·total / 10
        n = draw(st.sampled_from((3, 6, 9)))
        total = 10 * draw(st.integers(1, 10**5))
        halves = 2 * n * total // 10 - draw(st.sampled_from((0, 0, 1)))
        correct = draw(st.integers(0, halves // 2))
        rest = halves - 2 * correct
        shifted = draw(st.integers(0, rest))
        confused = rest - shifted
        wrong = total - correct - shifted - confused
    return correct, shifted, confused, correct + shifted + confused + wrong


@settings(PROPERTY, max_examples=examples(200))
@given(counts())
def test_grade_and_score_equal_fraction_reference(args: tuple[int, int, int, int]) -> None:
    assert grade(*args) == ref.grade(*args)
    assert assistance_score(*args) == float(ref.score(*args))
    assert 0 <= ref.score(*args) <= 1
