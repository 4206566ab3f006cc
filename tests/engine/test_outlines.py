"""The outlines the sketches draw of masks: traced from the runs, a few dozen points per object,
and close to the object (shapely measures the traced polygon against COCO's own polygons); the
kernel's walk is the pointer jumping numpy did (tests/helpers/outline_reference.py), and masks of
several frames traced at once are each traced alone."""

from __future__ import annotations

import json

import numpy as np
import pycocotools.mask as coco_mask
from helpers.needs import existing
from helpers.outline_reference import walked_by_pointer_jumping
from helpers.paths import THIRD_PARTY
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import MultiPolygon, Polygon
from shapely.ops import unary_union

from handler.boxes import BoolArray, MaskRuns
from handler.engine.masks import from_bitmaps
from handler.engine.outlines import GRID, MAX_POINTS, Outlines, outlines
from handler.kernels.outline_walk import outline_walk


def _shape(traced: Outlines, row: int) -> Polygon | MultiPolygon:
    """The region the loops enclose, drawn even-odd (a loop inside another is a hole)."""
    region = Polygon()
    for loop in traced.of(row):
        region = region.symmetric_difference(Polygon(loop).buffer(0))
    return region


def _iou(a: Polygon | MultiPolygon, b: Polygon | MultiPolygon) -> float:
    return float(a.intersection(b).area / a.union(b).area)


def test_a_ring_is_an_outer_loop_and_a_hole_and_parts_are_loops_of_their_own() -> None:
    y, x = np.mgrid[0:100, 0:120]
    disc = (x - 60) ** 2 + (y - 50) ** 2 < 40**2
    ring = disc & ((x - 60) ** 2 + (y - 50) ** 2 >= 15**2)
    parts = np.zeros_like(disc)
    parts[10:30, 5:25] = parts[60:90, 70:110] = True
    masks = from_bitmaps(np.stack((disc, ring, parts, np.zeros_like(disc))))
    traced = outlines(masks)
    assert [len(traced.of(row)) for row in range(4)] == [1, 2, 2, 0]
    exact = Polygon((60 + 40 * np.cos(t), 50 + 40 * np.sin(t)) for t in np.linspace(0, 2 * np.pi, 200))
    assert _iou(_shape(traced, 0), exact) > 0.95
    assert abs(_shape(traced, 1).area - ring.sum()) < 0.05 * ring.sum()
    squares = unary_union(
        [Polygon([(5, 10), (25, 10), (25, 30), (5, 30)]), Polygon([(70, 60), (110, 60), (110, 90), (70, 90)])]
    )
    assert _iou(_shape(traced, 2), squares) > 0.9


def test_the_outline_is_in_the_frame_s_units() -> None:
    """A sketch of normalised boxes draws the outline in fractions of the image."""
    bitmap = np.zeros((1, 50, 80), dtype=bool)
    bitmap[0, 10:40, 20:60] = True
    masks = from_bitmaps(bitmap)
    xy = np.concatenate(outlines(masks, (1 / 80, 1 / 50)).of(0))
    assert np.allclose(xy.min(axis=0), [0.25, 0.2], atol=0.02) and np.allclose(
        xy.max(axis=0), [0.75, 0.8], atol=0.02
    )


def test_coco_s_objects_are_traced_close_to_their_polygons_in_a_few_dozen_points() -> None:
    """Every single-polygon GT object of 32 px or more on its short side in the COCO val2014 sample:
    the traced outline against the polygon it was written as."""
    document = json.loads(
        (
            existing(THIRD_PARTY / "coco_val2014_100", "the third-party data") / "instances_val2014_100.json"
        ).read_text()
    )
    sizes = {image["id"]: (image["height"], image["width"]) for image in document["images"]}
    chosen = [
        a
        for a in document["annotations"]
        if isinstance(a["segmentation"], list) and len(a["segmentation"]) == 1 and min(a["bbox"][2:]) >= 32
    ]
    assert len(chosen) > 100
    bitmaps = [
        coco_mask.decode(coco_mask.frPyObjects(a["segmentation"], *sizes[a["image_id"]]))[:, :, 0].astype(
            bool
        )
        for a in chosen
    ]
    traced = [outlines(masks) for masks in map(lambda b: from_bitmaps(b[None]), bitmaps)]
    points = [sum(len(loop) for loop in t.of(0)) for t in traced]
    assert max(points) <= MAX_POINTS and min(points) >= 3
    polygons = [Polygon(np.reshape(a["segmentation"][0], (-1, 2))).buffer(0) for a in chosen]
    ious = np.array([_iou(_shape(t, 0), p) for t, p in zip(traced, polygons, strict=True)])
    assert np.median(ious) > 0.9 and np.quantile(ious, 0.1) > 0.8


def _grids(seed: int, n: int) -> BoolArray:
    """n grids of cells with a border of empty cells: noise of any density (specks, pinholes,
    cells touching only diagonally, a checkerboard's hundreds of loops), discs and rings, empties."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:GRID, 0:GRID]
    cells = np.zeros((n, GRID + 2, GRID + 2), dtype=bool)
    for grid in cells:
        kind, (cy, cx), radius = rng.integers(4), rng.uniform(0, GRID, 2), rng.uniform(2, GRID)
        distance = np.hypot(y - cy, x - cx)
        grid[1:-1, 1:-1] = (
            rng.random((GRID, GRID)) < rng.uniform(0.05, 0.95),
            distance < radius,
            (distance < radius) & (distance > radius / 2) | (rng.random((GRID, GRID)) < 0.05),
            (y + x) % 2 == 0,
        )[kind] & (rng.random() > 0.1)
    return cells


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 12),
    # (points an object keeps, points a loop needs): the sketches', then others to stress the walk
    st.sampled_from([(MAX_POINTS, 3), (8, 3), (2000, 3), (MAX_POINTS, 2), (5, 2)]),
)
def test_the_kernel_walks_the_loops_pointer_jumping_finds(seed: int, n: int, limits: tuple[int, int]) -> None:
    cells = _grids(seed, n)
    # each grid a GRID x GRID mask, its cells its pixels
    masks = from_bitmaps(cells[:, 1:-1, 1:-1])
    columns, rows = np.tile(np.arange(GRID) * GRID, (n, 1)), np.tile(np.arange(GRID), (n, 1))
    walked = outline_walk((masks.counts, masks.offsets), columns, rows, *limits)
    expected = walked_by_pointer_jumping(cells, *limits)
    for field in ("doubled", "loop_size", "points", "loops"):
        assert np.array_equal(getattr(walked, field), getattr(expected, field)), field


def test_masks_of_several_frames_traced_at_once_are_each_traced_alone() -> None:
    """One call for the masks of images of different sizes, each row in its own units (pixels, or
    fractions of its image): every point the same, to the bit, as its image's own call gives."""
    rng = np.random.default_rng(7)
    frames = [
        (50, 80, (1.0, 1.0)),
        (480, 640, (1 / 640, 1 / 480)),
        (17, 9, (1.0, 1.0)),
        (300, 200, (0.5, 2.0)),
    ]
    alone, together, units = [], [], []
    for height, width, per_pixel in frames:
        y, x = np.mgrid[0:height, 0:width]
        centres = rng.uniform(0, 1, (5, 2)) * [height, width]
        radii = rng.uniform(0.1, 0.6, 5) * min(height, width)
        bitmaps = np.hypot(y - centres[:, :1, None], x - centres[:, 1:, None]) < radii[:, None, None]
        bitmaps[1] &= rng.random((height, width)) < 0.7  # holes and specks
        masks = MaskRuns.concatenate([from_bitmaps(bitmaps), MaskRuns.none(1)])
        alone.append(outlines(masks, per_pixel))
        together.append(masks)
        units.append(np.tile(per_pixel, (len(masks), 1)))
    traced = outlines(MaskRuns.concatenate(together), np.concatenate(units))
    rows = 0
    for one in alone:
        for row in range(len(one.object_first) - 1):
            mine, theirs = one.of(row), traced.of(rows + row)
            assert [loop.tobytes() for loop in mine] == [loop.tobytes() for loop in theirs]
        rows += len(one.object_first) - 1
    assert sum(len(one.xy) for one in alone) == len(traced.xy) > 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.integers(1, 80))
def test_each_cell_is_the_pixel_under_its_centre(seed: int, height: int, width: int) -> None:
    """Masks narrower or shorter than the grid (a column or row sampled twice, the places going
    back) and wider: the kernel's grid is the bitmap read at each cell's centre pixel."""
    rng = np.random.default_rng(seed)
    bitmaps = rng.random((3, height, width)) < rng.uniform(0.1, 0.9)
    bitmaps[2] = False  # an empty mask: no loops
    masks = from_bitmaps(bitmaps)
    centres = (np.arange(GRID) + 0.5) / GRID
    xs = np.floor(centres * width).astype(np.int64)
    ys = np.floor(centres * height).astype(np.int64)
    cells = np.zeros((3, GRID + 2, GRID + 2), dtype=bool)
    cells[:, 1:-1, 1:-1] = bitmaps[:, ys][:, :, xs]
    walked = outline_walk(
        (masks.counts, masks.offsets), np.tile(xs * height, (3, 1)), np.tile(ys, (3, 1)), 48, 3
    )
    expected = walked_by_pointer_jumping(cells, 48, 3)
    for field in ("doubled", "loop_size", "points", "loops"):
        assert np.array_equal(getattr(walked, field), getattr(expected, field)), field
