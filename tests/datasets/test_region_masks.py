"""The tools' mask encodings decoded as their own libraries decode them: Label Studio's brush RLE
as label-studio-sdk's `decode_rle` (the RGBA picture's alpha not 0), a CVAT `<mask>` crop as
datumaro's CVAT reader places it on the image."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from handler.datasets.region_masks import (
    MAX_IMAGE_SIDE,
    MaskDecodeError,
    cvat_mask,
    image_size,
    label_studio_brush,
)

pictures = st.tuples(st.integers(1, 24), st.integers(1, 24)).flatmap(
    lambda size: arrays(np.uint8, size, elements=st.sampled_from([0, 0, 1, 7, 255]))
)


def column_major(picture: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    return np.flatnonzero(picture.T)


@settings(max_examples=200, deadline=None)
@given(pictures, st.booleans())
def test_a_brush_is_the_alpha_label_studio_sdk_decodes(alpha: npt.NDArray[np.uint8], coloured: bool) -> None:
    from label_studio_sdk.converter.brush import decode_rle, encode_rle

    height, width = alpha.shape
    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    rgba[..., 3] = alpha
    if coloured:  # the editor paints the label's colour: RGB values between the alphas
        rgba[alpha > 0, :3] = (200, 30, 40)
    rle = encode_rle(rgba.reshape(-1))
    decoded = np.reshape(decode_rle(rle), (height, width, 4))[:, :, 3]
    np.testing.assert_array_equal(label_studio_brush(rle, height, width), column_major(decoded > 0))


def test_a_brush_cut_short_or_of_another_size_is_one_reason() -> None:
    from label_studio_sdk.converter.brush import mask2rle

    rle = mask2rle(np.full((4, 5), 255, dtype=np.uint8))
    with pytest.raises(MaskDecodeError, match="expected 4 x 6 x 4 values"):
        label_studio_brush(rle, 4, 6)
    with pytest.raises(MaskDecodeError, match="ends before its 80 values"):
        label_studio_brush(rle[:-2], 4, 5)
    for written in ([1, 2, 300], [None, []], "abc", 1e400):  # the last two as JSON may write them
        with pytest.raises(MaskDecodeError, match="list of bytes"):
            label_studio_brush(written, 4, 5)


@pytest.mark.parametrize("size", [(0, 5), (float("nan"), 5), (5, 1e30), (MAX_IMAGE_SIDE + 1, 5)])
def test_a_mask_needs_an_image_size_it_can_be_drawn_on(size: tuple[float, float]) -> None:
    with pytest.raises(MaskDecodeError, match=f"1 to {MAX_IMAGE_SIDE} pixels"):
        image_size(*size)


@settings(max_examples=200, deadline=None)
@given(pictures, st.integers(0, 5), st.integers(0, 5))
def test_a_cvat_mask_is_its_crop_placed_as_datumaro_places_it(
    crop: npt.NDArray[np.uint8], left: int, top: int
) -> None:
    from datumaro.util import mask_tools

    crop_height, crop_width = crop.shape
    height, width = crop_height + top + 2, crop_width + left + 1
    runs = mask_tools.mask_to_rle((crop > 0).T.astype(np.uint8))["counts"]  # as datumaro's exporter
    text = ", ".join(map(str, runs))
    decoded = mask_tools.rle_to_mask(
        {"counts": np.array(runs, dtype=np.uint32), "size": [crop_width, crop_height]}
    )
    canvas = np.zeros((height, width), dtype=bool)
    canvas[top : top + crop_height, left : left + crop_width] = decoded.transpose()
    positions = cvat_mask(text, (left, top, crop_width, crop_height), height, width)
    np.testing.assert_array_equal(positions, column_major(canvas))


@pytest.mark.parametrize(
    ("rle", "crop", "message"),
    [
        ("1, 2", (0, 0, 2, 2), "adding up to the crop's 2 x 2 pixels"),
        ("1, x", (0, 0, 2, 2), "whole numbers separated by commas"),
        ("4", (3, 0, 2, 2), "inside the 4 x 4 image"),
        ("4", (0, 0, 0, 2), "width and height > 0"),
    ],
)
def test_a_cvat_mask_that_does_not_fit_is_one_reason(
    rle: str, crop: tuple[int, int, int, int], message: str
) -> None:
    with pytest.raises(MaskDecodeError, match=message):
        cvat_mask(rle, crop, 4, 4)
