"""The ledger as Parquet, through pyarrow (the `parquet` extra): text columns dictionary-encoded,
numbers typed as stored, null for none; a row group per chunk."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from handler.errors import InputError
from handler.report.json_lines import Number, Text
from handler.report.ledger.formats import OutcomeFormat
from handler.report.ledger.table import Table

if TYPE_CHECKING:
    import pyarrow


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InputError(
            "--format parquet needs pyarrow: pip install 'evaluate-prelabeling-efficiency[parquet]'"
        ) from None
    return pyarrow


def _array(pa: Any, column: Text | Number) -> pyarrow.Array:
    if isinstance(column, Text):
        index = np.asarray(column.index)
        indices = pa.array(np.maximum(index, 0).astype(np.int32), mask=index < 0)
        return pa.DictionaryArray.from_arrays(indices, pa.array(list(column.values), pa.string()))
    values = np.asarray(column.values)
    missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    if column.null is not None:
        missing = missing | column.null
    return pa.array(values, mask=missing)


def write_parquet(tables: Iterable[Table], columns: Sequence[str], stream: BinaryIO) -> None:
    pa = _pyarrow()
    writer = None
    for table in tables:
        batch = pa.table({name: _array(pa, table[name]) for name in columns})
        if writer is None:
            writer = pa.parquet.ParquetWriter(stream, batch.schema)
        writer.write_table(batch.cast(writer.schema))
    if writer is not None:
        writer.close()


PARQUET = OutcomeFormat("parquet", write_parquet, "Parquet (needs pyarrow: the `parquet` extra)", binary=True)
