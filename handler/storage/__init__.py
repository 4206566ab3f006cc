"""Where datasets are read from and reports are written to: a local folder or S3.

`open_store(uri)` picks the backend by URL scheme (the idea of fsspec's registry).
"""

from handler.storage.base import REPORT_PARTS, ReportPart, Source, Store
from handler.storage.registry import open_source, open_store, resolve_dataset

__all__ = ["REPORT_PARTS", "ReportPart", "Source", "Store", "open_source", "open_store", "resolve_dataset"]
