"""Field-by-field addition of count records, the merge of every figure that only adds up."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, TypeVar

from msgspec.structs import fields, replace

Counts = TypeVar("Counts")


def _added(first: Any, second: Any) -> Any:
    if isinstance(first, Mapping):  # counts by key: the keys of both, their counts summed
        total = Counter(first)
        total.update(second)
        return dict(total)
    return first + second


def add_fields(first: Counts, second: Counts) -> Counts:
    """`first` with every field (an int, or a mapping of key → int) plus the same field of `second`."""
    names = [f.name for f in fields(first)]  # type: ignore[arg-type]
    added = {name: _added(getattr(first, name), getattr(second, name)) for name in names}
    return replace(first, **added)  # type: ignore[type-var]
