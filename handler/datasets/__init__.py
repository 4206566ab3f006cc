"""Read any supported format into the one box model, and pair GT with predictions."""

from handler.datasets.pairing import PairedBoxes, pair_datasets
from handler.datasets.reading import (
    Loaded,
    format_names,
    images_folder,
    load_dataset,
    names_from,
    shard_format,
    shards_readable,
)

__all__ = [
    "Loaded",
    "PairedBoxes",
    "format_names",
    "images_folder",
    "load_dataset",
    "names_from",
    "pair_datasets",
    "shard_format",
    "shards_readable",
]
