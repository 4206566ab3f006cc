"""One side of a run (the GT or the predictions): what was given for it, and `open_side`.

The node, `compare` and the Python API (`load_records`, `PrelabelingEfficiency.evaluate`) all
open a side here, so a side reads the same whichever entry point names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Final

import msgspec

from handler.datasets.layouts import Layout
from handler.datasets.loaded import Loaded
from handler.datasets.read_options import READ_OPTIONS, ReadOptions, Side
from handler.datasets.reading import load_dataset
from handler.errors import DatasetError
from handler.forked import worker_count
from handler.storage import Source, Store, resolve_dataset

# How an error names a side: in the user's words, then the input that gave it.
SIDE_WORDS: Final = {"gt": "ground truth (GT_DATASET)", "pred": "predictions (PRED_DATASET)"}


class SideSpec(msgspec.Struct, frozen=True):
    """A side as given: its dataset reference, the format forced on it, and how to read it.

    The fields after `format` are the read options (`read_options.READ_OPTIONS`), one field of
    the option's name each, holding its parsed value (None: not given). A new read option adds
    its field here and in `ReadOptions`, and its `ReadOption` entry; the inputs, the CLIs and
    `open_side` then carry it without a change.
    """

    side: Side
    reference: str  # a path, an s3:// URI, or a dataset id of the store
    format: str | None = None  # None: detected
    names: str | None = None  # GT_NAMES: a names file, read when the side is opened
    layout: Layout | None = None
    model_version: str | None = None  # PRED_MODEL_VERSION: whose predictions a Label Studio export gives
    box: str | None = None  # PRED_BOX ... : other readings of the rows read
    frame: str | None = None
    class_map: str | None = None  # a class map file, read when the side is read again
    score: str | None = None  # PRED_SCORE: the full scale the confidences were written on
    mask: str | None = None  # PRED_MASK: how the masks were written (row-major runs, normalised points)

    @classmethod
    def given(cls, side: Side, reference: str, format: str | None = None, **texts: str | None) -> SideSpec:
        """A side from the texts of its read options by field (`names="classes.txt"`), each
        parsed by its option (an InputError names the option)."""
        known = {option.field: option for option in READ_OPTIONS}
        unknown = sorted(set(texts) - set(known))
        if unknown:
            raise TypeError(f"Expected read options among {', '.join(known)} but got {', '.join(unknown)}")
        parsed = {
            field: known[field].checked(side, text) for field, text in texts.items() if text is not None
        }
        return cls(side, reference, format, **parsed)


class OpenSide(msgspec.Struct, frozen=True, dict=True):
    """A side resolved to its files, with what its reader is told (its names file read)."""

    spec: SideSpec
    source: Source
    options: ReadOptions
    workers: int  # the local processes a big file of it may be decoded on

    @cached_property
    def loaded(self) -> Loaded:
        """This side read on its own (the GT): once, however many prediction sets are read
        against it (`compare` reads two)."""
        with self.named():
            return load_dataset(self.source, self.spec.format, None, self.options, self.workers)

    def loaded_against(self, gt: OpenSide) -> Loaded:
        """This side read with the GT as its reference (a results list names the GT's ids)."""
        reference = gt.loaded
        with self.named():
            return load_dataset(self.source, self.spec.format, reference, self.options, self.workers)

    @contextmanager
    def named(self) -> Iterator[None]:
        """A dataset error names the side it was found in: the user fixes "the predictions"."""
        try:
            yield
        except DatasetError as error:
            raise DatasetError(f"{SIDE_WORDS[self.spec.side]}: {error}") from None


def open_side(spec: SideSpec, store: Store, workers: int | None = None) -> OpenSide:
    """Resolve the side's reference (`store` holds dataset ids) and read what its options name;
    `workers`: the local processes its reading may use (None: every core)."""
    source = resolve_dataset(spec.reference, store, f"{spec.side.upper()}_DATASET")
    told = {option.field: option.opened(spec.side, getattr(spec, option.field)) for option in READ_OPTIONS}
    return OpenSide(spec, source, ReadOptions(spec.side, **told), worker_count(workers))
