"""The one box model that travels from the readers through the engine to the report.

A `BoxTable` keeps every box of a dataset as parallel numpy arrays (the idea of
supervision's `Detections`): validated once at construction, and a boolean mask or
index array returns the same type, so filtering by confidence is
`boxes[boxes.confidence >= t]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
AssetTags = tuple[str, ...]  # an asset's tags (native format), for slices of the report


def box_area(xyxy: FloatArray) -> FloatArray:
    """(N,) area of (N, 4) boxes, `(x_max - x_min) * (y_max - y_min)`: the one home of box area."""
    area: FloatArray = (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])
    return area


@dataclass(frozen=True)
class BoxTable:
    """N boxes as parallel arrays.

    Attributes:
        xyxy: (N, 4) float64, `[x_min, y_min, x_max, y_max]`.
        class_id: (N,) int64, index into the owning dataset's class names.
        confidence: (N,) float64; 1.0 where the source had none (SPEC §3).
        image: (N,) int64, index into the owning dataset's assets.
        source_index: (N,) int64, the box's position in its source file, for reports.
        difficult: (N,) bool, VOC's `difficult` flag (kept, only flagged).
    """

    xyxy: FloatArray
    class_id: IntArray
    confidence: FloatArray
    image: IntArray
    source_index: IntArray
    difficult: BoolArray

    def __post_init__(self) -> None:
        n = len(self.class_id)
        if self.xyxy.shape != (n, 4):
            raise ValueError(f"Expected `xyxy` of shape ({n}, 4) but got {self.xyxy.shape}")
        for name in ("confidence", "image", "source_index", "difficult"):
            length = len(getattr(self, name))
            if length != n:
                raise ValueError(f"Expected `{name}` of length {n} but got {length}")

    @classmethod
    def build(
        cls,
        xyxy: Any,
        class_id: Any,
        image: Any,
        confidence: Any = None,
        source_index: Any = None,
        difficult: Any = None,
    ) -> BoxTable:
        """Build a table from array-likes, filling the optional columns with their defaults."""
        class_ids = np.asarray(class_id, dtype=np.int64).reshape(-1)
        n = len(class_ids)
        return cls(
            xyxy=np.asarray(xyxy, dtype=np.float64).reshape(n, 4),
            class_id=class_ids,
            confidence=(np.ones(n) if confidence is None else np.asarray(confidence, dtype=np.float64)),
            image=np.asarray(image, dtype=np.int64).reshape(-1),
            source_index=(
                np.arange(n, dtype=np.int64)
                if source_index is None
                else np.asarray(source_index, dtype=np.int64)
            ),
            difficult=(np.zeros(n, dtype=bool) if difficult is None else np.asarray(difficult, dtype=bool)),
        )

    @classmethod
    def empty(cls) -> BoxTable:
        return cls.build(np.empty((0, 4)), [], [])

    @classmethod
    def concatenate(cls, tables: list[BoxTable]) -> BoxTable:
        if not tables:
            return cls.empty()
        return cls(
            xyxy=np.concatenate([t.xyxy for t in tables]),
            class_id=np.concatenate([t.class_id for t in tables]),
            confidence=np.concatenate([t.confidence for t in tables]),
            image=np.concatenate([t.image for t in tables]),
            source_index=np.concatenate([t.source_index for t in tables]),
            difficult=np.concatenate([t.difficult for t in tables]),
        )

    def __len__(self) -> int:
        return len(self.class_id)

    def __getitem__(self, index: Any) -> BoxTable:
        return BoxTable(
            xyxy=self.xyxy[index],
            class_id=self.class_id[index],
            confidence=self.confidence[index],
            image=self.image[index],
            source_index=self.source_index[index],
            difficult=self.difficult[index],
        )

    def with_columns(self, **columns: Any) -> BoxTable:
        """A copy with some columns replaced (e.g. re-indexed images or classes)."""
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values.update(columns)
        return BoxTable(**values)

    @property
    def area(self) -> FloatArray:
        return box_area(self.xyxy)


@dataclass(frozen=True)
class SkippedBox:
    """A per-box defect in an otherwise good file: skipped, counted and listed."""

    source: str
    position: str
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "position": self.position, "problem": self.problem}


@dataclass(frozen=True)
class LayoutNote:
    """Text label lines that do not fit the column layout read (issue 18), and the known layouts
    that fit them, as (layout name, share of the sampled lines), best first."""

    read: str
    read_share: float
    lines: int
    fitting: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Dataset:
    """One dataset read into the box model.

    `asset_ids[i]` names image i; `widths`/`heights` are NaN where unknown. `normalized`
    says the boxes are in 0-1 image fractions rather than pixels.
    """

    source: str
    format: str
    asset_ids: list[str]
    class_names: list[str]
    boxes: BoxTable
    widths: FloatArray
    heights: FloatArray
    normalized: bool = False
    skipped: list[SkippedBox] = field(default_factory=list)
    skipped_count: int = 0
    crowd_excluded: int = 0
    asset_tags: list[AssetTags] | None = None  # per asset (native format); None when not read
    # Data health (issue 11): boxes kept that wrote a confidence, and the skipped rows by reason.
    confidence_count: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    layout_note: LayoutNote | None = None  # text formats: the lines do not fit the layout read

    @property
    def image_count(self) -> int:
        return len(self.asset_ids)
