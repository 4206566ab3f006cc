"""Kernels compiled from C (`src/*.c`), called with ctypes on whole columns: the steps numpy can
only do in many whole-array passes or a Python loop per object (reading COCO's JSON records into
columns, decoding and rasterising masks, the IoU of two masks' runs). A kernel takes numpy arrays
and sizes, loops in C, and returns nothing but what it wrote into arrays it was given; ctypes
releases the GIL while it runs.

The library is the one built from these sources (its name carries their digest, `building.py`): a
wheel carries it (its build hook compiles it); a source tree builds it on first use with the
system's C compiler, next to the sources or, where that folder is read-only, in the user's cache.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from handler.kernels.building import SOURCES, build, library_name

HERE = Path(__file__).resolve().parent


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prelabel-eval"


@functools.cache
def library() -> ctypes.CDLL:
    """The kernels' library: found next to this file or in the cache, else built."""
    name = library_name(SOURCES)
    for folder in (HERE, _cache()):
        if (folder / name).exists():
            return ctypes.CDLL(str(folder / name))
    into = HERE if os.access(HERE, os.W_OK) else _cache()
    built = build(into)
    _remove_earlier_builds(into, keep=built)
    return ctypes.CDLL(str(built))


def _remove_earlier_builds(folder: Path, keep: Path) -> None:
    """Builds from earlier sources, which nothing will load again (a process that loaded one keeps
    its mapping when the file goes)."""
    for earlier in folder.glob(f"_kernels-*{keep.suffix}"):
        if earlier != keep:
            earlier.unlink(missing_ok=True)


@functools.cache
def kernel(name: str, *arguments: Any, returns: Any = ctypes.c_int64) -> Any:
    """The C function `name` with its argument types (ctypes types; `POINTER` for an array)."""
    function = getattr(library(), name)
    function.argtypes = list(arguments)
    function.restype = returns
    return function


POINTER = ctypes.c_void_p
SIZE = ctypes.c_int64
DOUBLE = ctypes.c_double


def address(array: npt.NDArray[Any], dtype: npt.DTypeLike) -> int:
    """Where a C-contiguous array of `dtype` starts (a kernel reads or writes it in place)."""
    if array.dtype != np.dtype(dtype) or not array.flags.c_contiguous:
        raise TypeError(f"a kernel takes a contiguous {np.dtype(dtype)} array, not {array.dtype}")
    return int(array.ctypes.data)
