"""The 16-bit run store (`handler/kernels/run_store.py`): runs of any 32-bit length stored and
merged back are the runs pycocotools writes for the same pixels (its own encoding of the mask),
and the pixels of a stored mask are its pixels; offsets that do not fit the runs are refused."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pycocotools.mask as coco_mask
import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import MaskRuns
from handler.engine.masks import foreground
from handler.kernels.run_store import RUN_MAX, merged, narrowed
from handler.report.exports.mask_encodings import coco_strings

LONG = st.one_of(st.integers(0, 40), st.integers(RUN_MAX - 2, RUN_MAX + 2), st.integers(0, 2**32 - 1))


def _canonical(runs: list[int]) -> list[int]:
    """The runs with every empty run after the first folded away (pycocotools' `rleEncode` of the
    same pixels writes only the first empty, when a mask starts on a pixel)."""
    out: list[int] = []
    for place, run in enumerate(runs):
        if place and run == 0:
            continue
        if out and (len(out) % 2) != (place % 2):  # an empty run was left out: same value as the last
            out[-1] += run
        else:
            out.append(run)
    return out


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.lists(LONG, max_size=6), max_size=6))
def test_stored_runs_fit_16_bits_and_merge_back_to_the_canonical_runs(masks: list[list[int]]) -> None:
    counts = np.array([v for runs in masks for v in runs], dtype=np.uint32)
    offsets = np.concatenate(([0], np.cumsum([len(runs) for runs in masks]))).astype(np.int64)
    stored, stored_offsets = narrowed(counts, offsets)
    assert stored.dtype == np.uint16
    for i, runs in enumerate(masks):
        mine = stored[stored_offsets[i] : stored_offsets[i + 1]].astype(np.int64)
        assert int(mine.sum()) == sum(runs)
        assert int(mine[1::2].sum()) == sum(runs[1::2]), "the 1s stay 1s"
    back, back_offsets = merged(stored, stored_offsets)
    assert [back[back_offsets[i] : back_offsets[i + 1]].tolist() for i in range(len(masks))] == [
        _canonical(runs) for runs in masks
    ]


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(350, 400), st.integers(400, 500), st.integers(0, 2**32 - 1))
def test_a_stored_mask_of_long_runs_is_its_pixels(height: int, width: int, seed: int) -> None:
    """A block on an image of more pixels than a 16-bit run holds: its runs from pycocotools, its
    pixels from the stored runs (`foreground`) are the bitmap's, its runs written back pycocotools'."""
    rng = np.random.default_rng(seed)
    bitmap = np.zeros((height, width), dtype=np.uint8)
    y0, x0 = rng.integers(0, height), rng.integers(0, 40)  # the background after it: one long run
    bitmap[y0 : y0 + rng.integers(1, 40), x0 : x0 + rng.integers(1, 40)] = 1
    encoded = coco_mask.encode(np.asfortranarray(bitmap))
    runs = _decoded_runs(bitmap)
    stored = MaskRuns(
        np.array(runs, dtype=np.uint32), np.array([0, len(runs)]), np.array([height]), np.array([width])
    )
    assert len(stored.counts) > len(runs), "a run longer than 16 bits is stored in pieces"
    fg = foreground(stored)
    pixels = np.zeros(height * width, dtype=np.uint8)
    for start, stop in zip(fg.start.tolist(), fg.stop.tolist(), strict=True):
        pixels[start:stop] = 1
    assert np.array_equal(pixels.reshape(width, height).T, bitmap)
    back, _ = merged(stored.counts, stored.offsets)
    assert back.tolist() == runs
    assert coco_strings(stored) == [encoded["counts"]]


def _decoded_runs(bitmap: npt.NDArray[np.uint8]) -> list[int]:
    """The bitmap's column-major runs, 0s first."""
    flat = np.concatenate(([0], bitmap.T.ravel(), [1 - bitmap.T.ravel()[-1]]))
    return np.diff(np.concatenate(([0], np.flatnonzero(flat[1:] != flat[:-1])))).tolist()


@pytest.mark.parametrize(
    "offsets", [[0, 3, 2], [0, 9], [-1, 2]], ids=["descending", "past the runs", "before them"]
)
def test_offsets_outside_the_runs_are_refused(offsets: list[int]) -> None:
    with pytest.raises(ValueError, match="outside the runs given"):
        narrowed(np.array([1, 2, 3], dtype=np.uint32), np.array(offsets, dtype=np.int64))
    with pytest.raises(ValueError, match="outside the runs given"):
        merged(np.array([1, 2, 3], dtype=np.uint16), np.array(offsets, dtype=np.int64))
