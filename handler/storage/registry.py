"""Choose the backend by URL scheme, and resolve dataset references."""

from __future__ import annotations

from pathlib import Path

from handler.errors import StorageError
from handler.storage.base import Source, Store, check_id
from handler.storage.local import LocalSource, LocalStore

S3_SCHEME = "s3://"
# A reference ending like a data file is a path that does not exist, not a dataset id.
DATA_SUFFIXES = {".json", ".jsonl", ".txt", ".xml", ".yaml", ".yml", ".csv"}


def open_store(uri: str) -> Store:
    """`s3://bucket/prefix` is an S3 store; anything else is a local folder."""
    if uri.startswith(S3_SCHEME):
        from handler.storage.s3 import S3Store  # boto3 is imported only when S3 is used

        return S3Store.from_uri(uri)
    return LocalStore(Path(uri))


def open_source(reference: str) -> Source:
    """A file or folder named by a path or an `s3://` URI."""
    if reference.startswith(S3_SCHEME):
        from handler.storage.s3 import S3Source

        return S3Source.from_uri(reference)
    return LocalSource(Path(reference))


def resolve_dataset(reference: str, store: Store) -> Source:
    """A dataset reference: an `s3://` URI, an existing local path, or a dataset id in the store.

    A bare id (e.g. `ds_01H...`) is looked up under `datasets/<id>/` of the store.
    """
    if reference.startswith(S3_SCHEME) or Path(reference).exists():
        return open_source(reference)
    if "/" in reference or "\\" in reference or Path(reference).suffix.lower() in DATA_SUFFIXES:
        raise StorageError(f"dataset {reference!r}: no such file or folder")
    return store.dataset(check_id(reference, "dataset id"))
