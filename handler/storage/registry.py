"""Choose the backend by URL scheme (fsspec's registry idea), and resolve dataset references."""

from __future__ import annotations

import difflib
import importlib
from pathlib import Path
from typing import Final

from handler.errors import StorageError, escape_controls, quoted
from handler.storage.base import Source, Store, check_id, split_scheme
from handler.storage.paths import local_path

# scheme -> "module:class"; imported on first use, so boto3 loads only when S3 is used.
BACKENDS: Final = {
    "": "handler.storage.local:LocalStore",
    "file": "handler.storage.local:LocalStore",
    "s3": "handler.storage.s3:S3Store",
}
# Bytes a local store's own keys may add below its root (`reports/<id>/outcomes/...`, a
# temporary file's name beside each): a root longer than PATH_MAX less this could not hold them.
STORE_KEY_ROOM: Final = 200
# A reference ending like a data file is a path that does not exist, not a dataset id.
DATA_SUFFIXES = {".json", ".jsonl", ".txt", ".xml", ".yaml", ".yml", ".csv"}


def backend(uri: str) -> type[Store]:
    """The one place a backend is chosen: by the URI's scheme, none meaning a local path."""
    scheme = split_scheme(uri)[0]
    if scheme not in BACKENDS:
        known = ", ".join(f"{name}://" for name in BACKENDS if name)
        raise StorageError(f"{uri!r}: unsupported storage scheme {scheme!r} (expected a local path, {known})")
    module, _, name = BACKENDS[scheme].partition(":")
    store: type[Store] = getattr(importlib.import_module(module), name)
    return store


def open_store(uri: str) -> Store:
    """`s3://bucket/prefix` is an S3 store; a path (or `file://path`) is a local folder."""
    _check_local(uri, "store root", STORE_KEY_ROOM)
    return backend(uri).from_uri(uri)


def open_target(uri: str, what: str) -> tuple[Store, str]:
    """Where a file (or a folder of files) named by a path or a URI is written: the store of its
    folder (a local folder, an `s3://bucket/prefix`) and its key there; every write goes through
    the store's `put` (a temporary name, then one rename or upload: never half a file)."""
    _check_local(uri, what)
    scheme, path = split_scheme(uri)
    trimmed = path.rstrip("/")
    folder, _, name = trimmed.rpartition("/")
    if name in ("", ".", ".."):
        raise StorageError(f"{what} {quoted(uri)}: expected a file name, not a folder")
    root = f"{scheme}://{folder}" if scheme and scheme != "file" else folder or "."
    if scheme == "s3" and not folder:
        raise StorageError(f"{what} {quoted(uri)}: expected s3://bucket/name")
    return backend(uri).from_uri(root if root != "/" else "/"), name


def open_source(reference: str, what: str = "the file") -> Source:
    """A file or folder named by a path or a URI; `what` names the input in a refusal."""
    _check_local(reference, what)
    return backend(reference).source_at(reference)


def resolve_dataset(reference: str, store: Store, what: str = "dataset") -> Source:
    """A dataset reference: a URI, an existing local path, or a dataset id in the store; `what`
    names the input (`GT_DATASET`) when the OS would refuse the path.

    A bare id (e.g. `ds_01H...`) is looked up under `datasets/<id>/` of the store.
    """
    if split_scheme(reference)[0] or _exists(reference, what):
        return open_source(reference, what)
    if "/" in reference or "\\" in reference or Path(reference).suffix.lower() in DATA_SUFFIXES:
        missing = f"{side_of(what)} {escape_controls(reference)}: no such file or folder"
        raise StorageError(missing + nearest(reference))
    folder = store.dataset(check_id(reference, "dataset id"))
    if not _has_files(store, reference):
        raise StorageError(
            f"{side_of(what)} {reference!r}: no such file or folder, and the store "
            f"{store.uri} has no dataset of that id: expected a path, an s3:// URI or a dataset id"
        )
    return folder


# Which side an input names, as an error says it: the user fixes "the predictions", not a key.
SIDES: Final = {"GT_DATASET": "ground truth (GT_DATASET)", "PRED_DATASET": "predictions (PRED_DATASET)"}


def side_of(what: str) -> str:
    return SIDES.get(what, what)


def nearest(reference: str) -> str:
    """`: did you mean …?` naming the existing local file or folder whose name is closest to the
    missing one's, in the folder it names (or nothing: no folder, nothing close)."""
    path = Path(reference)
    folder = path.parent
    try:
        names = [entry.name for entry in folder.iterdir()] if folder.is_dir() else []
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    return f"; did you mean {escape_controls(str(folder / close[0]))}?" if close else ""


def _exists(reference: str, what: str) -> bool:
    path = local_path(reference, what)
    try:
        return path.exists()
    except OSError as error:  # one the check cannot foresee (a folder on the way not searchable)
        raise StorageError(f"{what} {quoted(reference)}: {error.strerror or error}") from None


def _check_local(uri: str, what: str, room: int = 0) -> None:
    scheme, path = split_scheme(uri)
    if scheme in ("", "file"):
        local_path(path, what, room)


def _has_files(store: Store, dataset_id: str) -> bool:
    try:
        return bool(store.list(f"datasets/{dataset_id}/"))
    except StorageError:
        return True  # the store cannot say (e.g. no list permission): reading it will
