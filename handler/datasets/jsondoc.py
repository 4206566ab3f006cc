"""Parse JSON and JSON Lines with errors that name the file, the line and the column.

Nothing here knows a format. A format whose files get large gives its own fast decoding
(`Format.decode`), built from the pieces here: a top-level array of objects with the keys
it expects is not parsed at once but kept as an `ArrayText` whose reader decodes it a piece
at a time (`ArrayText.piece_text`), one after the other or side by side on local workers
that each cut their own, so that the Python objects of the whole file never exist together.
The text is in memory (`LoadedArray`) or, for a big file that can be read a range at a time
(`Format.stream`), read by the workers from the file (`StreamedArray`), never whole. The
cyclic garbage collector is paused while a parser builds objects: parsing makes no cycles,
and collections over millions of fresh dicts would otherwise cost more than the parsing itself.
"""

from __future__ import annotations

import gc
import json
import re
from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice, pairwise
from typing import Any, Final

import msgspec
import orjson

from handler.errors import DatasetError, quoted
from handler.storage import Source
from handler.storage.base import RangedFile, max_file_bytes

# A big JSON file is streamed from this size on (a COCO results list: read a range at a time), and
# a native document decoded in pieces on several local processes: below it, starting them costs
# more than they save.
PARALLEL_MIN_BYTES: Final = 16 << 20
# Elements per chunk when a parsed list is handed on in chunks.
CHUNK_ROWS: Final = 1 << 15
# Where the first element of an array may end, and how many such places are tried.
_SEPARATOR: Final = re.compile(rb"\}\s*,")
_FIRST_ELEMENT_TRIES: Final = 8
_WHITESPACE: Final = b"\xef\xbb\xbf \t\r\n"
# Text of a piece that one worker reads, cuts and decodes on its own (`ArrayText.piece_text`):
# larger ones cost a worker more page faults than they save in tasks.
PIECE_BYTES: Final = 2 << 20
# Where one object of an array may end and the next begin, found without reading what comes
# before; a cut that is not one leaves its piece (or the one before) invalid.
_BETWEEN_OBJECTS: Final = re.compile(rb"\}\s*,\s*\{")
# How far past its nominal end a piece is first read, to find the cut that ends it.
LOOKAHEAD_BYTES: Final = 64 << 10
# Read from each end of a big file to know its shape (and its first element) before streaming.
_HEAD_BYTES: Final = 1 << 20
# The keys an array's first object must have: a name, or a tuple of names one of which it has.
Keys = tuple[str | tuple[str, ...], ...]
# The numbers orjson refuses and Python's json module reads (NaN, Infinity, -Infinity, a number
# beyond float64 such as 1e309): what a file written by `json.dump` from floats holds.
_NON_STANDARD_NUMBER: Final = re.compile(rb"NaN|Infinity|\d[eE][+-]?\d{3}")
# An escaped UTF-16 surrogate: orjson refuses a lone one, json would read it into a string that
# cannot be written out again, so a text with one never takes json's reading.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")

Decode = Callable[[bytes], "list[Any] | None"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (reference counting still frees)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def nested_too_deeply(where: str) -> DatasetError:
    return DatasetError(
        f"{where}: a value is nested too deeply: expected a dataset with values at most a few levels deep"
    )


def _located(
    source: Source, error: orjson.JSONDecodeError, line_offset: int = 0, content: bytes = b""
) -> DatasetError:
    reason = error.msg.split(":")[0]
    if "recursion" in reason.lower() or "depth" in reason.lower():
        return nested_too_deeply(source.name)
    at_start = error.lineno + line_offset == 1 and error.colno == 1
    return DatasetError(
        f"{source.name}: line {error.lineno + line_offset} column {error.colno}: "
        f"expected valid JSON ({reason}){looks_like(content) if at_start else ''}"
    )


def loads(text: bytes) -> Any:
    """`text` parsed as plain JSON values, with the numbers `json.loads` gives: orjson's parse
    (the same float64 bits), or `json.loads`' for a text orjson refuses that holds a number only
    json reads (NaN, Infinity, 1e309); orjson's `JSONDecodeError` when neither reads it."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        if not _NON_STANDARD_NUMBER.search(text) or _SURROGATE_ESCAPE.search(text):
            raise
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
        raise


# What a file that is not JSON from its first character may be instead, and what to do about it.
LOOKS_LIKE: Final = (
    ("XML", "a VOC or CVAT file is read from a .xml name: rename it, or give its folder"),
    ("CSV", "no format here is CSV: convert it to COCO JSON or the native format (docs/formats.md)"),
    ("label lines", "YOLO and cartucho lines are read from .txt files: give their folder"),
)


def looks_like(content: bytes) -> str:
    """`: it reads as CSV (first line `ImageID,Source,…`); <the fix>`, or nothing when the file's
    start looks like none of LOOKS_LIKE."""
    lines = content[:4096].decode("utf-8", "replace").splitlines()
    first = lines[0].strip() if lines else ""
    kind = _kind(first, lines[1] if len(lines) > 1 else "")
    if kind is None:
        return ""
    return f": it reads as {kind} (first line {quoted(first)}); {dict(LOOKS_LIKE)[kind]}"


def _kind(first: str, second: str) -> str | None:
    if first.startswith("<"):
        return "XML"
    if first.count(",") >= 2 and (not second or second.count(",") >= first.count(",")):
        return "CSV"
    tokens = first.split()
    if len(tokens) >= 5 and all(_numeric(token) for token in tokens[1:]):
        return "label lines"
    return None


def _numeric(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse_json(source: Source, content: bytes) -> Any:
    """The parsed document, plain JSON values (an error names the line and column)."""
    try:
        with gc_paused():
            return loads(content)
    except orjson.JSONDecodeError as error:
        raise _located(source, error, content=content) from None


class ArrayText(msgspec.Struct, frozen=True):
    """A top-level JSON array of objects: `first` is its first element, `start` to `stop` the
    text between its brackets.

    It can be decoded side by side in pieces that each worker cuts on its own: the nominal
    bounds (`nominal_pieces`) are cut at the first `},{` at or after each, so neighbours agree
    on their common cut without talking. A cut inside a string or a nested value leaves a
    piece invalid: pieces that all decode are the array's elements in order (the first starts
    at the first element, and each valid piece ends where an element ends), so the reader
    falls back to the serial reading whenever one fails.
    """

    source: Source
    first: dict[str, Any]
    start: int
    stop: int
    workers: int  # the local processes its reader may decode it on

    @abstractmethod
    def read(self, start: int, stop: int) -> bytes | memoryview:
        """The text from `start` to `stop` (shorter when the file shrank; OSError when unreadable)."""

    @abstractmethod
    def unchanged(self) -> bool:
        """Whether the text is still the one looked at (a file not rewritten since)."""

    @abstractmethod
    def loaded(self) -> LoadedArray:
        """The same array with its whole text in memory, for the plain reading."""

    def nominal_pieces(self) -> list[tuple[int, int]]:
        """About `PIECE_BYTES` each, from `start` to `stop`."""
        count = max(1, -(-(self.stop - self.start) // PIECE_BYTES))
        bounds = [self.start + k * (self.stop - self.start) // count for k in range(count + 1)]
        return list(pairwise(bounds))

    def piece_text(self, nominal: tuple[int, int]) -> bytes | None:
        """The elements from the cut at the piece's nominal start to the cut at its nominal end,
        as a JSON array; None when the piece holds no cut of its own or the file is short."""
        first, last = nominal
        ahead = LOOKAHEAD_BYTES
        while True:
            reach = self.stop if last == self.stop else min(last + ahead, self.stop)
            text = memoryview(self.read(first, reach))  # cut without a copy: one copy, the piece's
            if len(text) != reach - first:
                return None
            opening = _BETWEEN_OBJECTS.search(text) if first > self.start else None
            if opening is not None and opening.start() >= last - first:
                return None  # an element longer than the piece: no cut of its own
            closing = _BETWEEN_OBJECTS.search(text, last - first) if last < self.stop else None
            if last < self.stop and closing is None and reach < self.stop:
                ahead *= 8  # the cut that ends the piece lies further on
                continue
            if (first > self.start and opening is None) or (last < self.stop and closing is None):
                return None
            begin = opening.end() - 1 if opening else 0  # the `{` after the cut
            end = closing.start() + 1 if closing else len(text)  # just past the `}` before it
            return b"".join((b"[", text[begin:end], b"]"))


class LoadedArray(ArrayText, frozen=True):
    """An array whose whole text `content` is in memory."""

    content: bytes

    def read(self, start: int, stop: int) -> memoryview:
        return memoryview(self.content)[start:stop]

    def unchanged(self) -> bool:
        return True

    def loaded(self) -> LoadedArray:
        return self

    def whole(self) -> list[Any]:
        """The array parsed at once as plain JSON values (a syntax error names its line and column)."""
        document = parse_json(self.source, self.content)
        if not isinstance(document, list):
            raise DatasetError(f"{self.source.name}: expected a JSON array")
        return document


class StreamedArray(ArrayText, frozen=True):
    """An array in a big file that is read a range at a time, never whole unless `loaded`."""

    file: RangedFile
    keys: Keys

    def read(self, start: int, stop: int) -> bytes:
        return self.file.read(start, stop)

    def unchanged(self) -> bool:
        return self.file.unchanged()

    def loaded(self) -> LoadedArray:
        """The same array read whole; an error when the file has changed."""
        loaded = loaded_array(self.source, self.source.read_bytes(), self.keys, self.workers)
        if loaded is None or (loaded.first, loaded.start, loaded.stop) != (self.first, self.start, self.stop):
            raise DatasetError(
                f"{self.source.name}: changed while it was read: expected a file that stays as it is"
            )
        return loaded


def has_keys(value: dict[str, Any], keys: Keys) -> bool:
    """Whether an object has every key of `keys` (one of them where a key is a tuple of names)."""
    return all(any(name in value for name in ((key,) if isinstance(key, str) else key)) for key in keys)


def row_chunks(values: list[Any]) -> Iterator[list[Any]]:
    """`values` in consecutive slices of `CHUNK_ROWS`."""
    for first in range(0, len(values), CHUNK_ROWS):
        yield values[first : first + CHUNK_ROWS]


def loaded_array(source: Source, content: bytes, keys: Keys, workers: int) -> LoadedArray | None:
    """A LoadedArray if `content` is an array whose first element is an object with `keys`."""
    shape = _array_shape(content, len(content) - len(content.rstrip(_WHITESPACE)), len(content), keys)
    return None if shape is None else LoadedArray(source, *shape, workers, content)


def streamed_array(source: Source, keys: Keys, min_bytes: int, workers: int) -> StreamedArray | None:
    """A StreamedArray if `source` is a file of at least `min_bytes` that can be read in ranges
    and is an array whose first element (within its first `_HEAD_BYTES`) is an object with `keys`."""
    file = source.ranged()
    if file is None or not max(min_bytes, 2 * _HEAD_BYTES) <= file.size <= max_file_bytes():
        return None  # a file over the limit is refused by reading it whole
    try:
        head, tail = file.read(0, _HEAD_BYTES), file.read(file.size - _HEAD_BYTES, file.size)
    except OSError:
        return None  # reading it whole says why
    shape = _array_shape(head, len(tail) - len(tail.rstrip(_WHITESPACE)), file.size, keys)
    if shape is None or tail.rstrip(_WHITESPACE)[-1:] != b"]":
        return None
    return StreamedArray(source, *shape, workers, file, keys)


def _array_shape(head: bytes, trailing: int, size: int, keys: Keys) -> tuple[dict[str, Any], int, int] | None:
    """(first element, start, stop) of an array of objects whose text starts with `head`, is
    `size` bytes long and ends with `trailing` bytes of whitespace; None for anything else."""
    start = len(head) - len(head.lstrip(_WHITESPACE))
    stop = size - trailing - 1
    if head[start : start + 1] != b"[" or (stop < len(head) and head[stop : stop + 1] != b"]"):
        return None
    first = _first_element(head, start, stop)
    if not isinstance(first, dict) or not has_keys(first, keys):
        return None
    return first, start + 1, stop


def _first_element(head: bytes, start: int, stop: int) -> Any | None:
    """The array's first element: the text up to the first `}` and `,` that parses (an earlier
    one may close a value inside it, as a result's RLE `segmentation` object), of the first few."""
    for match in islice(_SEPARATOR.finditer(head, start, stop), _FIRST_ELEMENT_TRIES):
        try:
            return orjson.loads(head[start + 1 : match.start() + 1])
        except orjson.JSONDecodeError:
            continue
    return None


class LineRecords(msgspec.Struct, frozen=True):
    """The values of JSON Lines, each with where it came from (`line 7`, `shard-2.jsonl line 7`)."""

    records: list[Any]
    positions: list[str]

    @classmethod
    def join(cls, parts: list[LineRecords]) -> LineRecords:
        """Shards of one dataset, in order."""
        return cls([r for p in parts for r in p.records], [q for p in parts for q in p.positions])


def parse_json_lines(source: Source, content: bytes, prefix: str = "") -> LineRecords:
    """One JSON value per non-blank line; `prefix` names the shard in positions."""
    records, positions = [], []
    with gc_paused():
        for number, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(loads(line))
            except orjson.JSONDecodeError as error:
                raise _located(source, error, line_offset=number - 1) from None
            positions.append(f"{prefix}line {number}")
    return LineRecords(records, positions)


def looks_like_json_lines(content: bytes) -> bool:
    """Several top-level values, one per line (a `.jsonl` file), rather than one document."""
    first, _, rest = content.lstrip().partition(b"\n")
    if not first.startswith(b"{") or not rest.strip():
        return False
    try:
        loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def looks_like_json(content: bytes) -> bool:
    """A JSON document or JSON Lines starts with an object or a list (else: a label file, XML...)."""
    return content.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")


def json_type(value: Any) -> str:
    """What JSON calls a decoded value's type, for a message (`expected a list, got a JSON number`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), type(value).__name__)
