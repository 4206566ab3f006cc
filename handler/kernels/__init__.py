"""Kernels compiled from C (`src/*.c`), called with ctypes on whole columns: the steps numpy can
only do in many whole-array passes or a Python loop per object (reading COCO's JSON records into
columns, decoding and rasterising masks, the IoU of two masks' runs). A kernel takes numpy arrays
and sizes, loops in C, and returns nothing but what it wrote into arrays it was given; ctypes
releases the GIL while it runs.

A kernel is declared once, with what each argument is (`kernel("name", F64, SIZE, ...)`): an
array of a dtype (`U8`, `I8`, `U16`, `U32`, `I64`, `F64`), a `SIZE` or a `DOUBLE`, or a pointer to a C
struct of such `Fields`. A call passes the arrays themselves; each value is checked against its
argument before C runs. An empty array is passed like any other (numpy's pointer for it): a
kernel given a length of 0 never reads or writes through it, so no argument is ever NULL.

The library is the one built from these sources (its name carries their digest, `building.py`): a
wheel carries it (its build hook compiles it); a source tree builds it on first use with the
system's C compiler, next to the sources or, where that folder is read-only, in the user's cache.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast, overload

import numpy as np

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


class Argument(Protocol):
    """What a C function's parameter is: its ctypes type, and the checked value passed for it."""

    @property
    def ctype(self) -> type[Any]: ...

    def converted(self, value: object) -> object:
        """The value C is given for `value`; a TypeError saying what was expected otherwise."""
        ...


class Array:
    """A C-contiguous numpy array of `dtype`, passed as where it starts (read or written in place)."""

    ctype = ctypes.c_void_p

    def __init__(self, dtype: type[np.generic]) -> None:
        self.dtype = np.dtype(dtype)

    def converted(self, value: object) -> int:
        if not isinstance(value, np.ndarray):
            raise TypeError(f"expected a contiguous {self.dtype} array, not {type(value).__name__}")
        if value.dtype != self.dtype:
            raise TypeError(f"expected a contiguous {self.dtype} array, not {value.dtype}")
        if not value.flags.c_contiguous:
            raise TypeError(f"expected a contiguous {self.dtype} array, not a strided view")
        return int(value.ctypes.data)


class Number:
    """A C number of `ctype`, given as any `kind` of number (numpy's too) that `to` converts."""

    def __init__(self, ctype: type[Any], kind: type[Any], to: Callable[[Any], object], what: str) -> None:
        self.ctype, self.kind, self.to, self.what = ctype, kind, to, what

    def converted(self, value: object) -> object:
        if not isinstance(value, self.kind):
            raise TypeError(f"expected {self.what}, not {type(value).__name__}")
        return self.to(value)


class Fields:
    """A pointer to a C struct whose fields are these arguments in order, given as a tuple of
    their values (a table's columns kept together: one argument for many)."""

    def __init__(self, *fields: Argument) -> None:
        self.fields = fields
        layout = [(f"field_{position}", field.ctype) for position, field in enumerate(fields)]
        self.structure = type("Fields", (ctypes.Structure,), {"_fields_": layout})
        self.ctype: type[Any] = ctypes.POINTER(self.structure)

    def converted(self, value: object) -> object:
        if not isinstance(value, tuple):
            raise TypeError(f"expected a tuple of {len(self.fields)} fields, not {type(value).__name__}")
        # byref keeps the struct alive as long as the reference, which the call holds.
        return ctypes.byref(self.structure(*_converted(self.fields, value, "field")))


U8, I8, U16, U32, I64, F64 = (
    Array(dtype) for dtype in (np.uint8, np.int8, np.uint16, np.uint32, np.int64, np.float64)
)
SIZE = Number(ctypes.c_int64, Integral, int, "an integer")  # a length, an index, a count
DOUBLE = Number(ctypes.c_double, Real, float, "a real number")


def _converted(arguments: tuple[Argument, ...], values: tuple[object, ...], what: str) -> Iterable[object]:
    """Each value checked against its argument and converted, in order."""
    if len(values) != len(arguments):
        raise TypeError(f"expected {len(arguments)} {what}s, not {len(values)}")
    for position, (argument, value) in enumerate(zip(arguments, values, strict=True), start=1):
        try:
            yield argument.converted(value)
        except TypeError as error:
            raise TypeError(f"{what} {position}: {error}") from None


Result = TypeVar("Result", int, None)
Made = TypeVar("Made")


def on_two_threads(here: Callable[[], Made], there: Callable[[], Made]) -> tuple[Made, Made]:
    """`here()` on this thread while `there()` runs on a second one, both results in that order:
    two kernel calls on two cores (ctypes releases the GIL while C runs)."""
    with ThreadPoolExecutor(1) as second:
        later = second.submit(there)
        return here(), later.result()


class Kernel(Generic[Result]):
    """The C function `name` of the library, called with values checked against its `arguments`
    (a TypeError, before C runs, for a wrong count, type, dtype or layout)."""

    def __init__(
        self, name: str, arguments: tuple[Argument, ...], returns: type[ctypes.c_int64] | None
    ) -> None:
        self.name, self.arguments, self.returns = name, arguments, returns

    @functools.cached_property
    def function(self) -> Any:
        """The C function, typed (found on first call: declaring a kernel loads no library)."""
        function = library()[self.name]
        function.argtypes = [argument.ctype for argument in self.arguments]
        function.restype = self.returns
        return function

    def __call__(self, *values: object) -> Result:
        try:
            converted = list(_converted(self.arguments, values, "argument"))
        except TypeError as error:
            raise TypeError(f"kernel {self.name}: {error}") from None
        return cast(Result, self.function(*converted))


@overload
def kernel(name: str, *arguments: Argument) -> Kernel[int]: ...
@overload
def kernel(name: str, *arguments: Argument, returns: None) -> Kernel[None]: ...
def kernel(name: str, *arguments: Argument, returns: type[ctypes.c_int64] | None = ctypes.c_int64) -> Any:
    """The kernel `name` taking `arguments`, returning an int64 (or nothing: `returns=None`)."""
    return Kernel(name, arguments, returns)
