"""The compressed strings' kernel: pycocotools' strings decoded (tests/engine/test_masks.py holds
it to pycocotools), and bounds that would take it outside the text refused before it reads."""

from __future__ import annotations

import numpy as np
import pytest

from handler.kernels.rle_strings import decoded


def test_strings_side_by_side_are_decoded_each_on_its_own() -> None:
    # pycocotools' string of the 2x2 mask [[0, 1], [1, 0]] (runs 1, 2, 1), and the same again
    counts, offsets, readable = decoded(b"121" * 2, np.array([0, 3, 6], dtype=np.int64))
    assert readable.tolist() == [True, True]
    assert offsets.tolist() == [0, 3, 6]
    assert counts.tolist() == [1, 2, 1] * 2


@pytest.mark.parametrize("bounds", [[0, 7], [-1, 3], [3, 2], [0, 5, 4]])
def test_bounds_outside_the_text_or_out_of_order_are_refused(bounds: list[int]) -> None:
    with pytest.raises(ValueError, match="do not lie in order within the 6 characters"):
        decoded(b"121" * 2, np.array(bounds, dtype=np.int64))
