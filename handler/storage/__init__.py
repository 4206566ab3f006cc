"""Where datasets are read from and reports are written to: a local folder or S3.

Stores offer byte-object primitives (put/get/open/exists/delete/list); `open_store(uri)` picks
the backend by URL scheme (the idea of fsspec's registry).
"""

from handler.storage.base import (
    AccessDenied,
    Content,
    Entry,
    ObjectNotFound,
    Piece,
    SizedContent,
    Source,
    Store,
)
from handler.storage.registry import open_source, open_store, open_target, resolve_dataset
from handler.storage.sink import ObjectSink, WrittenObject

__all__ = [
    "AccessDenied",
    "Content",
    "Entry",
    "ObjectNotFound",
    "ObjectSink",
    "Piece",
    "SizedContent",
    "Source",
    "Store",
    "WrittenObject",
    "open_source",
    "open_store",
    "open_target",
    "resolve_dataset",
]
