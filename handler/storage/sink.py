"""A picklable put into a store named by its URI: how a worker in any process (a forked one, a
dask worker) writes one object of a report and says what it wrote."""

from __future__ import annotations

from functools import cache

import msgspec

from handler.storage.base import SizedContent, Store
from handler.storage.registry import open_store


@cache
def _opened(uri: str) -> Store:
    """One store per process and URI (an S3 client is built once per worker, not per object)."""
    return open_store(uri)


class WrittenObject(msgspec.Struct, frozen=True):
    """What a worker reports back: the object it wrote (store-relative key) and its size."""

    key: str
    size: int


class ObjectSink(msgspec.Struct, frozen=True):
    """Where one object goes; picklable, so a worker in any process can write it."""

    store_uri: str
    key: str
    content_type: str

    def write(self, content: bytes | SizedContent) -> WrittenObject:
        _opened(self.store_uri).put(self.key, content, self.content_type)
        return self.written(content)

    def written(self, content: bytes | SizedContent) -> WrittenObject:
        """What `write` says it wrote, known before it does."""
        return WrittenObject(self.key, len(content))
