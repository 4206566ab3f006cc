"""The exports' mask encoders (`report/exports/mask_encodings.py`) against each tool's reference
decoder, on drawn bitmaps: COCO's compressed strings are pycocotools' `encode`; Label Studio's
brush streams decode by label-studio-sdk's `decode_rle` (and our reader); CVAT's crops decode by
datumaro's `rle_to_mask` as its CVAT importer does (and our reader); a mask's polygon (its parts
and holes joined by bridges of no width) rasterised by pycocotools is the mask itself."""

from __future__ import annotations

from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
from helpers.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.datasets.region_masks import cvat_mask, label_studio_brush
from handler.engine.masks import from_bitmaps
from handler.report.exports.mask_encodings import coco_strings, cvat_crops, label_studio_brushes, row_runs
from handler.report.exports.mask_outlines import outlines

PROPERTY = settings(
    deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
Bitmaps = np.ndarray[Any, np.dtype[np.bool_]]


@st.composite
def bitmaps(draw: st.DrawFn) -> Bitmaps:
    """Masks of one size with a pixel each: random (parts, holes, corners touching), sparse or full."""
    n, height, width = draw(st.integers(1, 5)), draw(st.integers(1, 30)), draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(("random", "sparse", "full")))
    drawn = np.ones((n, height, width), dtype=bool)
    if kind != "full":
        drawn = rng.random((n, height, width)) < (0.5 if kind == "random" else 0.05)
    drawn[:, rng.integers(0, height), rng.integers(0, width)] = True
    return drawn


@settings(PROPERTY, max_examples=examples(120))
@given(bitmaps())
def test_coco_strings_are_what_pycocotools_encodes(drawn: Bitmaps) -> None:
    strings = coco_strings(from_bitmaps(drawn))
    assert strings == [coco_mask.encode(np.asfortranarray(m.astype(np.uint8)))["counts"] for m in drawn]


@settings(PROPERTY, max_examples=examples(120))
@given(bitmaps())
def test_row_runs_cover_the_pixels_row_by_row(drawn: Bitmaps) -> None:
    found = row_runs(from_bitmaps(drawn))
    painted = np.zeros_like(drawn)
    for owner, y, x0, x1 in zip(found.owner, found.y, found.x0, found.x1, strict=True):
        assert not painted[owner, y, x0:x1].any()
        painted[owner, y, x0:x1] = True
    assert (painted == drawn).all()
    assert (found.x0[1:] > found.x1[:-1])[
        (found.owner[1:] == found.owner[:-1]) & (found.y[1:] == found.y[:-1])
    ].all()


@settings(PROPERTY, max_examples=examples(120))
@given(bitmaps())
def test_brushes_decode_to_the_masks_by_label_studio_sdk_and_our_reader(drawn: Bitmaps) -> None:
    from label_studio_sdk.converter.brush import decode_rle

    _, height, width = drawn.shape
    for mask, stream in zip(drawn, label_studio_brushes(from_bitmaps(drawn)), strict=True):
        rgba = decode_rle(stream.tolist()).reshape(height, width, 4)
        assert ((rgba == 255).all(axis=2) == mask).all() and ((rgba == 0).all(axis=2) == ~mask).all()
        assert (label_studio_brush(stream.tolist(), height, width) == np.flatnonzero(mask.T)).all()


@settings(PROPERTY, max_examples=examples(120))
@given(bitmaps())
def test_cvat_crops_decode_to_the_masks_by_datumaro_and_our_reader(drawn: Bitmaps) -> None:
    from datumaro.util.mask_tools import rle_to_mask

    _, height, width = drawn.shape
    crops = cvat_crops(from_bitmaps(drawn))
    for i, mask in enumerate(drawn):
        runs = crops.runs[crops.offsets[i] : crops.offsets[i + 1]]
        left, top, wide, high = (int(v[i]) for v in (crops.left, crops.top, crops.width, crops.height))
        # datumaro's CVAT importer: the runs read as a (width, height) column-major mask, transposed
        crop = rle_to_mask({"counts": runs.astype(np.uint32), "size": np.array([wide, high])}).T
        canvas = np.zeros((height, width), dtype=bool)
        canvas[top : top + high, left : left + wide] = crop
        assert (canvas == mask).all()
        rle = ", ".join(map(str, runs.tolist()))
        assert (cvat_mask(rle, (left, top, wide, high), height, width) == np.flatnonzero(mask.T)).all()


def _rasterised_outlines(drawn: Bitmaps) -> Bitmaps:
    _, height, width = drawn.shape
    found = outlines(from_bitmaps(drawn))
    polygons = [
        found.points[found.offsets[i] : found.offsets[i + 1]].astype(float).reshape(-1).tolist()
        for i in range(len(drawn))
    ]
    decoded: Bitmaps = coco_mask.decode(coco_mask.frPyObjects(polygons, height, width)).astype(bool)
    return decoded.transpose(2, 0, 1)


@settings(PROPERTY, max_examples=examples(200))
@given(bitmaps())
def test_a_polygon_is_the_mask_drawn_by_pycocotools(drawn: Bitmaps) -> None:
    assert (_rasterised_outlines(drawn) == drawn).all()
