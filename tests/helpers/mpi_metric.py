"""One rank of the MPI metric test: `mpirun -n 2 python -m helpers.mpi_metric OUT_DIR`.

tests/engine/test_mmeval_metric.py starts it. Each rank feeds the real COCO val2014 records
the way a DataLoader over PyTorch's DistributedSampler would (padded, interleaved, a few
images per batch), computes, and writes what it got to OUT_DIR/rank<r>.json for the test
to compare with one process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from handler.metric import load_records
from handler.storage import open_store
from helpers.paths import THIRD_PARTY

COCO = THIRD_PARTY / "coco_val2014_100"
# 97 of the 100 images: over 2 ranks a DistributedSampler pads one, a copy of image 0.
N_IMAGES = 97
BATCH = 3

Record = dict[str, Any]
Split = Callable[[int, int, int], list[int]]


def coco_records(store: Path) -> tuple[list[Record], list[Record], list[str]]:
    """The COCO records as the node reads them: predictions with integer labels (as a detector
    gives them) named by the returned classes, ground truth with class names."""
    records = load_records(
        str(COCO / "instances_val2014_100.json"),
        str(COCO / "instances_val2014_fakebbox100_results.json"),
        store=open_store(str(store)),
    )
    predictions, groundtruths = records.predictions[:N_IMAGES], records.groundtruths[:N_IMAGES]
    classes = sorted({name for image in [*predictions, *groundtruths] for name in image["labels"]})
    as_ids = [{**image, "labels": np.searchsorted(classes, image["labels"])} for image in predictions]
    return as_ids, groundtruths, classes


def distributed_sampler(n_images: int, world_size: int, rank: int) -> list[int]:
    """PyTorch's DistributedSampler (shuffle=False): padded with the first images, interleaved."""
    padded = list(range(n_images)) + list(range(n_images))[: -n_images % world_size]
    return padded[rank::world_size]


def contiguous_shards(n_images: int, world_size: int, rank: int) -> list[int]:
    """Equal contiguous shards, the last padded with the first images (mmeval's 'cat' mode)."""
    per_rank = -(-n_images // world_size)
    padded = list(range(n_images)) + list(range(n_images))[: per_rank * world_size - n_images]
    return padded[rank * per_rank : (rank + 1) * per_rank]


def feed(
    metric: Any, predictions: Sequence[Record], groundtruths: Sequence[Record], indices: list[int]
) -> None:
    """What an evaluation loop does: `add` per batch of images, in the sampler's order."""
    for start in range(0, len(indices), BATCH):
        batch = indices[start : start + BATCH]
        metric.add([predictions[i] for i in batch], [groundtruths[i] for i in batch])


def main(out: Path) -> None:
    from handler.mmeval import PrelabelingEfficiencyMetric

    predictions, groundtruths, classes = coco_records(out / "store")
    meta = {"classes": classes}
    got: dict[str, Any] = {}
    modes: tuple[tuple[str, Split], ...] = (("unzip", distributed_sampler), ("cat", contiguous_shards))
    for mode, split in modes:
        metric = PrelabelingEfficiencyMetric(dataset_meta=meta, dist_backend="mpi4py", dist_collect_mode=mode)
        rank, world_size = metric.dist_comm.rank, metric.dist_comm.world_size
        feed(metric, predictions, groundtruths, split(N_IMAGES, world_size, rank))
        got[mode] = metric.compute(size=N_IMAGES)
        got[f"{mode}_without_size"] = metric.compute()
    local = PrelabelingEfficiencyMetric(dataset_meta=meta)  # the default backend: no synchronization
    got["indices"] = distributed_sampler(N_IMAGES, world_size, rank)
    feed(local, predictions, groundtruths, got["indices"])
    got["non_dist"] = local.compute(size=N_IMAGES)
    got["world_size"] = world_size
    (out / f"rank{rank}.json").write_text(json.dumps(got), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
