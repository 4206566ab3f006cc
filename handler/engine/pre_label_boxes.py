"""`pre_labels/*.npz`: the predictions a policy could pre-label, and each image's size, for
`prelabel-eval export` (report/exports/) without reading the datasets again.

A shard writes one chunk beside its ledger chunk (the ledger holds only the kept
predictions, no box and no image size), with every prediction some threshold of the sweep keeps:
the policy is decided from the merged run, after the shards. Once it is, the run rewrites each
chunk keeping only what a policy keeps (`trimmed`: per class, its lowest threshold), so the stored
report holds those and not the long tail of low confidences.

Each chunk is an uncompressed `.npz` of columns: per image `widths`, `heights` (NaN where
unknown) and the shard's `asset_ids` and `class_names` (as JSON bytes); per prediction `image`
(into the chunk's assets), `class_id` (into its classes), `confidence` (float64: a threshold
compares it exactly as the run did) and `xywh` (float32 left, top, width, height: a 10,000 px
image keeps them within 0.001 px), in pixels or, where `normalized` is set, in 0-1 image
fractions, and, when some box is rotated, `angle` (float32 degrees clockwise about the centre;
`xywh` is then the box before turning), and, when some box is a quadrilateral of an image of
unknown size (`BoxTable.quads`), `quads` (float32 x1 y1 … x4 y4 in 0-1, NaN for the other rows),
and, when the run scored masks, each prediction's mask
as its runs (`MaskRuns`, column-major, never a bitmap): `mask_counts` (all the runs, 16-bit as
`MaskRuns` stores them),
`mask_offsets` (a row per prediction and one more: where each one's runs start) and `mask_height`,
`mask_width`. Chunks of shard files name their own classes: `read_chunks` joins them by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
import orjson
from msgspec.structs import replace

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray, MaskRuns, SourceIds, rows_taken
from handler.engine.evaluation import keep_mask
from handler.engine.npz_chunks import Chunk, StreamedChunk, check_rows, loaded, names_column, names_of

# The columns with a row per prediction (the others have one per image, or are one value).
PER_PREDICTION: Final = (
    "image",
    "class_id",
    "confidence",
    "xywh",
    "angle",
    "quads",
    "mask_height",
    "mask_width",
)
# The masks' ragged columns: `mask_offsets` has a row per prediction and one more.
MASK_COUNTS: Final = "mask_counts"
MASK_OFFSETS: Final = "mask_offsets"
# float32 coordinates and int32 indices: 32 bytes a prediction with its float64 confidence.
COORDINATES: Final = np.float32
INDICES: Final = np.int32


class ChunkImages(msgspec.Struct, frozen=True):
    """The images of one shard, as the paired boxes name them."""

    asset_ids: Sequence[str]
    class_names: Sequence[str]
    widths: FloatArray
    heights: FloatArray
    normalized: bool
    own_ids: SourceIds | None = None  # the GT file's own image and class ids (COCO), if it has them


def candidate_chunk(pred: BoxTable, images: ChunkImages, lowest_threshold: float) -> StreamedChunk:
    """The chunk of one shard: its predictions kept at `lowest_threshold`, its images' sizes.

    Only the four columns are taken, not the whole table, and the chunk is made as it is written
    (the masks' runs are copied out a piece at a time): a worker's peak stays the columns'."""
    kept = keep_mask(pred.confidence, lowest_threshold)
    rows: slice | IntArray = slice(None) if bool(kept.all()) else np.flatnonzero(kept)
    xyxy = (pred.xyxy if isinstance(rows, slice) else rows_taken(pred.xyxy, rows)).astype(COORDINATES)
    xyxy[:, 2:] -= xyxy[:, :2]  # corners -> width and height, in place
    angle = pred.angle[rows]
    turned = {"angle": angle.astype(COORDINATES)} if angle.any() else {}
    quads = {} if pred.quads is None else {"quads": pred.quads[rows].reshape(-1, 8).astype(COORDINATES)}
    # The masks of a run scored on masks (pairing made them runs); a box run's table has none.
    masks = mask_columns(pred.masks[rows]) if isinstance(pred.masks, MaskRuns) else {}
    own = images.own_ids
    ids = (
        {}
        if own is None
        else {"image_ids": names_column(own.image_ids), "class_ids": names_column(own.class_ids)}
    )
    return StreamedChunk(
        {
            **turned,
            **quads,
            **masks,
            **ids,
            "asset_ids": names_column(images.asset_ids),
            "class_names": names_column(images.class_names),
            "widths": images.widths,
            "heights": images.heights,
            "normalized": np.array(images.normalized),
            "image": pred.image[rows].astype(INDICES),
            "class_id": pred.class_id[rows].astype(INDICES),
            "confidence": pred.confidence[rows],
            "xywh": xyxy,
        }
    )


# The columns that say which predictions a chunk keeps (read first: the others only if some go).
_KEPT_BY: Final = ("class_names", "class_id", "confidence")


class Floors(msgspec.Struct, frozen=True):
    """The lowest confidence kept of each class: those `listed` by name, `others` for the rest."""

    listed: Mapping[str, float]
    others: float


def trimmed(content: bytes | StreamedChunk, lowest: Floors) -> bytes | StreamedChunk:
    """A chunk keeping the predictions at or above their class's `lowest` threshold: `content`
    itself when that is every one (its other columns, the masks' runs, are then never read). A
    chunk still in this process (`StreamedChunk`) is read from its columns, not parsed."""
    kept = _kept(content.columns if isinstance(content, StreamedChunk) else loaded(content, _KEPT_BY), lowest)
    if kept.all():
        return content
    chunk = dict(content.columns) if isinstance(content, StreamedChunk) else loaded(content)
    masks = masks_of(chunk)
    for key in PER_PREDICTION:
        if key in chunk:
            chunk[key] = chunk[key][kept]
    if masks is not None:
        chunk.update(mask_columns(masks[kept]))
    return StreamedChunk(chunk)


def _kept(chunk: Chunk, lowest: Floors) -> BoolArray:
    names = orjson.loads(chunk["class_names"].tobytes())
    floor = np.array([lowest.listed.get(name, lowest.others) for name in names], dtype=np.float64)
    kept: BoolArray = keep_mask(chunk["confidence"], floor[chunk["class_id"]] if len(floor) else np.empty(0))
    return kept


def mask_columns(masks: MaskRuns) -> dict[str, npt.NDArray[Any]]:
    """The chunk's columns of `masks`, a row each (the runs as they are: a few bytes a column)."""
    return {
        MASK_COUNTS: masks.counts,
        MASK_OFFSETS: masks.offsets,
        "mask_height": masks.height.astype(INDICES),
        "mask_width": masks.width.astype(INDICES),
    }


def masks_of(chunk: Chunk) -> MaskRuns | None:
    """A chunk's masks (None: the run scored boxes); ValueError for damaged runs."""
    if MASK_OFFSETS not in chunk:
        return None
    offsets = chunk[MASK_OFFSETS].astype(np.int64)
    counts = chunk[MASK_COUNTS]
    rows = len(chunk["confidence"])
    if (
        len(offsets) != rows + 1
        or offsets[0] != 0
        or offsets[-1] != len(counts)
        or (np.diff(offsets) < 0).any()
    ):
        raise ValueError(
            f"damaged chunk: {MASK_OFFSETS} does not index the {len(counts)} runs of {rows} masks"
        )
    return MaskRuns(
        counts,
        offsets,
        chunk["mask_height"].astype(np.int64),
        chunk["mask_width"].astype(np.int64),
    )


class Candidates(msgspec.Struct, frozen=True):
    """Every chunk's predictions as one table over all the report's images and classes.

    `image` indexes `asset_ids` / `widths` / `heights`, `class_id` indexes `class_names`;
    predictions are in asset order, each image's in the order the run read them."""

    asset_ids: list[str]
    class_names: list[str]
    widths: FloatArray
    heights: FloatArray
    normalized: bool
    image: IntArray
    class_id: IntArray
    confidence: FloatArray
    xywh: FloatArray  # (n, 4), float64 from here on; the box before turning
    angle: FloatArray  # degrees clockwise about the centre (0: axis-aligned)
    # The GT file's own ids (as `asset_ids` and `class_names`; "" for a class it lacks), when every
    # chunk has them (a COCO GT).
    own_ids: SourceIds | None = None
    masks: MaskRuns | None = None  # each prediction's mask, in pixels, when the run scored masks
    quads: FloatArray | None = None  # (n, 4, 2) in 0-1, NaN rows for rectangles (`BoxTable.quads`)

    def __getitem__(self, rows: BoolArray | IntArray | slice) -> Candidates:
        """The same images and classes, the predictions `rows` only."""
        return replace(
            self,
            image=self.image[rows],
            class_id=self.class_id[rows],
            confidence=self.confidence[rows],
            xywh=self.xywh[rows],
            angle=self.angle[rows],
            masks=None if self.masks is None else self.masks[rows],
            quads=None if self.quads is None else self.quads[rows],
        )

    def __len__(self) -> int:
        return len(self.image)

    def rows_of_images(self, start: int, stop: int) -> slice:
        """The rows of images [start, stop) (`image` ascends)."""
        low, high = np.searchsorted(self.image, (start, stop)).tolist()
        return slice(low, high)

    def images(self, start: int, stop: int) -> Candidates:
        """Images [start, stop) and their predictions, `image` counted from `start`."""
        own = self.own_ids
        kept = self[self.rows_of_images(start, stop)]
        return replace(
            kept,
            asset_ids=self.asset_ids[start:stop],
            widths=self.widths[start:stop],
            heights=self.heights[start:stop],
            image=kept.image - start,
            own_ids=None if own is None else replace(own, image_ids=own.image_ids[start:stop]),
        )


def _angles(chunk: Chunk) -> FloatArray:
    """A chunk's angles (a chunk without the column: every box axis-aligned)."""
    if "angle" in chunk:
        return chunk["angle"].astype(np.float64)
    return np.zeros(len(chunk["confidence"]))


def read_chunks(contents: Sequence[bytes]) -> Candidates:
    """The chunks of a report, in shard order, as one table (classes joined by name)."""
    chunks = [loaded(content) for content in contents]
    class_names: dict[str, int] = {}
    asset_ids: list[str] = []
    images, classes = [], []
    for chunk in chunks:
        names = names_of(chunk, "class_names")
        assets = len(names_of(chunk, "asset_ids"))
        check_rows(chunk, PER_PREDICTION, {"image": assets, "class_id": len(names)})
        check_rows({**chunk, "assets": np.empty(assets)}, ("assets", "widths", "heights"), {})
        remap = np.array([class_names.setdefault(name, len(class_names)) for name in names], dtype=np.int64)
        images.append(chunk["image"].astype(np.int64) + len(asset_ids))
        classes.append(remap[chunk["class_id"]] if len(remap) else chunk["class_id"].astype(np.int64))
        asset_ids.extend(names_of(chunk, "asset_ids"))

    def joined(key: str, dtype: type = np.float64) -> FloatArray:
        return np.concatenate([chunk[key].astype(dtype) for chunk in chunks]) if chunks else np.empty(0)

    candidates = Candidates(
        asset_ids=asset_ids,
        class_names=list(class_names),
        widths=joined("widths"),
        heights=joined("heights"),
        normalized=any(bool(chunk["normalized"]) for chunk in chunks),
        image=np.concatenate(images) if chunks else np.empty(0, dtype=np.int64),
        class_id=np.concatenate(classes) if chunks else np.empty(0, dtype=np.int64),
        confidence=joined("confidence"),
        xywh=np.concatenate([chunk["xywh"].astype(np.float64) for chunk in chunks])
        if chunks
        else np.empty((0, 4)),
        angle=np.concatenate([_angles(chunk) for chunk in chunks]) if chunks else np.empty(0),
        own_ids=_own_ids(chunks, list(class_names)),
        masks=_masks(chunks),
        quads=_quads(chunks),
    )
    return candidates[np.argsort(candidates.image, kind="stable")]


def _quads(chunks: Sequence[Chunk]) -> FloatArray | None:
    """Every chunk's quadrilaterals, (n, 4, 2) (a chunk without: NaN rows); None when no chunk has them."""
    if not any("quads" in chunk for chunk in chunks):
        return None
    quads: FloatArray = np.concatenate(
        [
            chunk["quads"].astype(np.float64).reshape(-1, 4, 2)
            if "quads" in chunk
            else np.full((len(chunk["confidence"]), 4, 2), np.nan)
            for chunk in chunks
        ]
    )
    return quads


def _masks(chunks: Sequence[Chunk]) -> MaskRuns | None:
    """Every chunk's masks one after the other (a chunk without: its rows without one); None when
    no chunk has them."""
    found = [masks_of(chunk) for chunk in chunks]
    if all(masks is None for masks in found):
        return None
    return MaskRuns.concatenate(
        [
            MaskRuns.none(len(chunk["confidence"])) if masks is None else masks
            for chunk, masks in zip(chunks, found, strict=True)
        ]
    )


def _own_ids(chunks: Sequence[Chunk], class_names: list[str]) -> SourceIds | None:
    """The GT file's ids of every chunk's images and of the joined classes, if every chunk has them."""
    if not chunks or not all("image_ids" in chunk for chunk in chunks):
        return None
    image_ids = [image for chunk in chunks for image in names_of(chunk, "image_ids")]
    by_name: dict[str, str] = {}
    for chunk in chunks:
        by_name.update(zip(names_of(chunk, "class_names"), names_of(chunk, "class_ids"), strict=False))
    return SourceIds(image_ids, [by_name.get(name, "") for name in class_names])
