"""The polygon kernel (`kernels/src/polygons.c`) against pycocotools' `frPoly` and `merge`, on
the points that test its rounding (on a grid of fifths and tenths: the scaled points and the walk
at .5), steep and near-flat edges, points far off the image and many parts to an object; and safe
on what a file can say: huge or absurd coordinates, huge, empty or negative image sizes, offsets
that do not index the points."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
import pytest
from helpers.coco_masks import Objects, objects_on_an_image
from helpers.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.kernels.polygons import rasterised
from handler.kernels.run_store import merged

PROPERTY = settings(
    deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _ours(objects: Objects, height: int, width: int, **rooms: Any) -> list[list[int]]:
    """The kernel's runs, merged back (a run longer than 16 bits hold is written in pieces)."""
    parts = [np.asarray(part, dtype=np.float64).reshape(-1, 2) for object_ in objects for part in object_]
    counts, lengths = rasterised(
        np.concatenate(parts) if parts else np.zeros((0, 2)),
        np.concatenate(([0], np.cumsum([len(p) for p in parts]))).astype(np.int64),
        np.concatenate(([0], np.cumsum([len(o) for o in objects]))).astype(np.int64),
        np.full(len(objects), height, dtype=np.int64),
        np.full(len(objects), width, dtype=np.int64),
        **rooms,
    )
    assert counts.dtype == np.uint16
    runs, offsets = merged(counts, np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))
    return [runs[start:end].tolist() for start, end in itertools.pairwise(offsets)]


def _pycocotools(objects: Objects, height: int, width: int) -> list[list[int]]:
    """pycocotools' own runs: each part by `frPoly`, the object's parts by `merge`."""
    runs = []
    for parts in objects:
        merged: Any = coco_mask.merge(coco_mask.frPyObjects(parts, height, width))
        runs.append(_uncompressed(merged["counts"]))
    return runs


def _uncompressed(counts: bytes) -> list[int]:
    """COCO's compressed string read back as the runs it holds."""
    runs: list[int] = []
    at = 0
    while at < len(counts):
        value, shift, more = 0, 0, True
        while more:
            c = counts[at] - 48
            value |= (c & 0x1F) << shift
            more = bool(c & 0x20)
            at, shift = at + 1, shift + 5
            if not more and c & 0x10:
                value |= -1 << shift
        runs.append(value + (runs[-2] if len(runs) > 2 else 0))
    return runs


# Coordinates on a grid of tenths: scaled by 5, half of them land on .5 (rounded as C rounds).
TENTHS = st.integers(-400, 1200).map(lambda k: k / 10)
WIDE = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)


@settings(PROPERTY, max_examples=examples(200))
@given(objects_on_an_image(TENTHS))
def test_objects_on_a_grid_of_tenths_are_pycocotools_runs(drawn: tuple[Objects, int, int]) -> None:
    objects, height, width = drawn
    assert _ours(objects, height, width) == _pycocotools(objects, height, width)


@settings(PROPERTY, max_examples=examples(100))
@given(objects_on_an_image(WIDE))
def test_objects_reaching_far_off_the_image_are_pycocotools_runs(drawn: tuple[Objects, int, int]) -> None:
    objects, height, width = drawn
    assert _ours(objects, height, width) == _pycocotools(objects, height, width)


def test_a_long_steep_edge_crosses_each_column_once() -> None:
    """An edge of a thousand rows that moves ten columns: the crossings found by search."""
    objects = [[[0.3, -500.0, 10.7, 900.0, 10.7, -500.0], [2.0, 2.0, 2.0, 700.0, 2.1, 700.0]]]
    assert _ours(objects, 600, 12) == _pycocotools(objects, 600, 12)


ABSURD = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([4.3e8, -4.3e8, 2**31 / 5, -(2**31) / 5, 1e300, -1e300]),
)


def _whole(runs: list[int], height: int, width: int) -> None:
    """Runs that cover the image, background first, none empty but the first; or none at all
    where the image has no pixels or more than 32-bit counts hold."""
    drawable = height >= 1 and width >= 1 and height * width < 2**32
    assert sum(runs) == (height * width if drawable else 0)
    assert (len(runs) > 0) == drawable
    assert all(r > 0 for r in runs[1:])


@settings(PROPERTY, max_examples=examples(100))
@given(
    st.lists(st.tuples(ABSURD, ABSURD), min_size=1, max_size=6),
    st.sampled_from([(1, 1), (7, 5), (3, 2**16 - 1), (2**16, 2**16), (0, 5), (-3, 4), (5, -(2**40))]),
)
def test_points_anywhere_a_double_goes_give_whole_masks(
    points: list[tuple[float, float]], size: tuple[int, int]
) -> None:
    """The toggles are bounded by the image's columns, never by the points' reach."""
    (runs,) = _ours([[[c for point in points for c in point]]], *size)
    _whole(runs, *size)


@settings(PROPERTY, max_examples=examples(60))
@given(
    objects_on_an_image(WIDE),
    st.sampled_from([(1, 2**32 - 1), (2**32 - 1, 1), (2**16, 2**16 - 1), (2**31, 2**31), (2**62, 2**62)]),
)
def test_huge_images_give_whole_masks_or_none(drawn: tuple[Objects, int, int], size: tuple[int, int]) -> None:
    objects, _, _ = drawn
    for runs in _ours(objects, *size):
        _whole(runs, *size)


@settings(PROPERTY, max_examples=examples(60))
@given(objects_on_an_image(TENTHS), st.integers(0, 40), st.integers(0, 30))
def test_toggles_found_band_by_band_and_runs_in_a_growing_room_are_the_same(
    drawn: tuple[Objects, int, int], toggle_room: int, run_room: int
) -> None:
    """An object of more toggles than the room is drawn band of columns by band, and runs that
    overflow their room are written again into a larger one: the masks do not change."""
    objects, height, width = drawn
    assert _ours(objects, height, width, toggle_room=toggle_room, run_room=run_room) == _ours(
        objects, height, width
    )


@settings(PROPERTY, max_examples=examples(60))
@given(objects_on_an_image(TENTHS), st.integers(0, 40))
def test_objects_written_in_two_halves_on_two_threads_are_the_same(
    drawn: tuple[Objects, int, int], toggle_room: int
) -> None:
    """The later half of the objects written on a second thread and moved down to follow the
    first: the masks do not change."""
    objects, height, width = drawn
    assert _ours(objects, height, width, toggle_room=toggle_room, halves=True) == _ours(
        objects, height, width, toggle_room=toggle_room
    )
    assert _ours(objects, height, width, halves=True) == _pycocotools(objects, height, width)


def test_a_zigzag_across_a_wide_image_is_drawn_in_bands_as_pycocotools() -> None:
    """Edges across every column of a wide image: more toggles than one band holds."""
    zigzag = [c for k in range(12) for c in ((0.0, 10.0 + 4 * k) if k % 2 else (39990.0, 12.0 + 4 * k))]
    objects = [[[*zigzag, 0.0, 70.0]]]
    assert _ours(objects, 64, 40000) == _pycocotools(objects, 64, 40000)


def test_offsets_that_do_not_index_the_points_are_refused() -> None:
    xy = np.zeros((3, 2))
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match="offsets"):
        rasterised(xy, np.array([0, 4]), np.array([0, 1]), one, one)
    with pytest.raises(ValueError, match="offsets"):
        rasterised(xy, np.array([0, 3]), np.array([0, 2]), one, one)
    with pytest.raises(ValueError, match="offsets"):
        rasterised(xy, np.array([2, 1]), np.array([0, 1]), one, one)
