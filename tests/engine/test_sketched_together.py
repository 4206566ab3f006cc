"""Many images' sketches made at once (their masks traced in one call) are each the sketch made of
that image alone: images of different sizes and frames (pixels, an unknown size, normalised), of
two evaluations (two shards' passes), beside an evaluation of boxes only."""

from __future__ import annotations

import math

import numpy as np
from helpers.cases import THRESHOLDS

from handler.boxes import BoolArray, BoxTable, MaskRuns
from handler.engine.drawn_boxes import ToSketch, image_sketches
from handler.engine.evaluation import Evaluation, evaluate
from handler.engine.masks import extent, from_bitmaps

# (height, width) of each image of an evaluation
SIZES = [(60, 90), (480, 640), (23, 17), (300, 200)]


def _discs(rng: np.random.Generator, height: int, width: int, shift: float) -> BoolArray:
    """Four discs (one of them holed and specked), moved by `shift` of the image's size."""
    y, x = np.mgrid[0:height, 0:width]
    centres = (rng.uniform(0.2, 0.8, (4, 2)) + shift) * [height, width]
    radii = rng.uniform(0.1, 0.3, 4) * min(height, width)
    bitmaps: BoolArray = np.hypot(y - centres[:, :1, None], x - centres[:, 1:, None]) < radii[:, None, None]
    bitmaps[0] &= rng.random((height, width)) < 0.8
    return bitmaps


def _side(seed: int, shift: float, normalized: bool, with_masks: bool) -> BoxTable:
    rng = np.random.default_rng(seed)
    masks = MaskRuns.concatenate([from_bitmaps(_discs(rng, h, w, shift)) for h, w in SIZES])
    scale = np.repeat([[w, h, w, h] for h, w in SIZES], 4, axis=0) if normalized else 1.0
    image = np.repeat(np.arange(len(SIZES)), 4)
    return BoxTable.build(
        extent(masks) / scale,
        rng.integers(0, 2, len(image)),
        image,
        confidence=rng.uniform(0.3, 1.0, len(image)),
        masks=masks if with_masks else None,
    )


def _evaluation(seed: int, normalized: bool = False, with_masks: bool = True) -> Evaluation:
    gt = _side(seed, 0.0, normalized, with_masks)
    pred = _side(seed, 0.03, normalized, with_masks)
    return evaluate(gt, pred, len(SIZES), THRESHOLDS)


def test_sketches_made_together_are_each_made_alone() -> None:
    pixels, normalised, boxes = (
        _evaluation(1),
        _evaluation(2, normalized=True),
        _evaluation(3, with_masks=False),
    )
    wanted = [
        *(
            ToSketch(pixels, i, f"p{i}", ["a", "b"], (float(w), float(h), False))
            for i, (h, w) in enumerate(SIZES)
        ),
        ToSketch(pixels, 1, "p1-unsized", ["a", "b"], (math.nan, math.nan, False)),
        *(
            ToSketch(normalised, i, f"n{i}", ["a", "b"], (float(w), float(h), True))
            for i, (h, w) in enumerate(SIZES)
        ),
        ToSketch(normalised, 2, "n2-unsized", ["a", "b"], (math.nan, math.nan, True)),
        *(
            ToSketch(boxes, i, f"b{i}", ["a", "b"], (float(w), float(h), False))
            for i, (h, w) in enumerate(SIZES)
        ),
    ]
    together = image_sketches(wanted)
    assert together == tuple(sketch for one in wanted for sketch in image_sketches([one]))
    outlined = [box.outline for sketch in together[:10] for box in sketch.boxes]
    assert len(outlined) > 40 and all(outlined)
    # the normalised sketches' outlines are in fractions of their images, the others' in pixels
    largest = [max(max(loop) for box in sketch.boxes for loop in box.outline) for sketch in together[:10]]
    assert max(largest[5:]) <= 1.0 < min(largest[:5])
    # each rounded to a thousandth of its own frame's width: 90 and 17 px to 0.01, 640 and 200 to
    # 0.1, a normalised frame (1 wide) to 0.001
    for sketch, places in zip(together[:9], [2, 1, 2, 1, None, 3, 3, 3, 3], strict=True):
        values = [v for box in sketch.boxes for loop in box.outline for v in loop]
        if places is not None:
            assert all(round(v, places) == v for v in values) and any(
                round(v, places - 1) != v for v in values
            )
    assert all(box.outline == () for sketch in together[10:] for box in sketch.boxes)
