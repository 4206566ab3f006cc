"""Parse JSON and JSON Lines with errors that name the file, the line and the column.

Nothing here knows a format. A format whose files get large gives its own fast decoding
(`Format.decode`), built from the pieces here: a top-level array of objects with the keys
it expects is not parsed at once but kept as a `ChunkedArray` that its reader decodes a
piece at a time, so that the Python objects of the whole file never exist together. The
cyclic garbage collector is paused while a parser builds objects: parsing makes no cycles,
and collections over millions of fresh dicts would otherwise cost more than the parsing itself.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

import orjson

from handler.errors import DatasetError
from handler.storage import Source

# Text decoded at once from a chunked array (about 12k COCO results), and elements per
# chunk when a parsed list is handed on in chunks.
CHUNK_BYTES: Final = 1 << 20
CHUNK_ROWS: Final = 1 << 15
# Where one element may end and the next begin; a cut that is not one fails to decode.
_SEPARATOR: Final = re.compile(rb"\}\s*,")
# Cuts tried after a failed one before the array is parsed whole.
_TRIES: Final = 8
_WHITESPACE: Final = b"\xef\xbb\xbf \t\r\n"

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


def _located(source: Source, error: orjson.JSONDecodeError, line_offset: int = 0) -> DatasetError:
    reason = error.msg.split(":")[0]
    if "recursion" in reason.lower() or "depth" in reason.lower():
        return nested_too_deeply(source.name)
    return DatasetError(
        f"{source.name}: line {error.lineno + line_offset} column {error.colno}: "
        f"expected valid JSON ({reason})"
    )


def parse_json(source: Source, content: bytes) -> Any:
    """The parsed document, plain JSON values (an error names the line and column)."""
    try:
        with gc_paused():
            return orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise _located(source, error) from None


@dataclass(frozen=True)
class ChunkedArray:
    """A top-level JSON array of objects, decoded in pieces of about `CHUNK_BYTES`.

    `content[start:stop]` is the text between the brackets; `first` is the first element.
    Pieces are cut after a `}` followed by a comma; a cut inside a string or a nested value
    leaves the piece invalid, so the decoder's refusal moves the cut to the next candidate.
    """

    source: Source
    content: bytes
    first: dict[str, Any]
    start: int
    stop: int

    def decoded(self, decode: Decode) -> Iterator[list[Any]]:
        """The elements, a piece at a time; `decode(text)` is None when the text is not JSON.

        If no cut works, the whole file is parsed (as plain JSON values): a syntax error
        then names its line and column.
        """
        position, done = self.start, 0
        while position < self.stop:
            piece = self._next_piece(position, decode)
            if piece is None:
                yield from self._rest_of_whole(done)
                return
            position, elements = piece
            done += len(elements)
            yield elements

    def pieces(self) -> list[tuple[int, int]]:
        """Every piece's (start, end), each cut at the first candidate past `CHUNK_BYTES`, for
        decoding side by side. The cuts are right when every piece decodes: pieces decoded in
        order each prove the next one's start (a wrong cut leaves its piece invalid, above)."""
        bounds, position = [], self.start
        while position < self.stop:
            end, following = next(self._cuts(position))
            bounds.append((position, end))
            position = following
        return bounds

    def piece(self, start: int, end: int) -> bytes:
        """The text of the elements between two cuts, as a JSON array."""
        return b"[" + self.content[start:end] + b"]"

    def _cuts(self, position: int) -> Iterator[tuple[int, int]]:
        """(end of piece, start of the next) candidates, the last one the closing bracket."""
        target = position + CHUNK_BYTES
        if target < self.stop:
            for match in islice(_SEPARATOR.finditer(self.content, target, self.stop), _TRIES):
                yield match.start() + 1, match.end()
        yield self.stop, self.stop

    def _next_piece(self, position: int, decode: Decode) -> tuple[int, list[Any]] | None:
        for end, following in self._cuts(position):
            with gc_paused():
                elements = decode(self.piece(position, end))
            if elements:  # never empty: `[..., ]` is not JSON
                return following, elements
        return None

    def _rest_of_whole(self, done: int) -> Iterator[list[Any]]:
        document = parse_json(self.source, self.content)
        if not isinstance(document, list):
            raise DatasetError(f"{self.source.name}: expected a JSON array")
        yield from row_chunks(document[done:])


def row_chunks(values: list[Any]) -> Iterator[list[Any]]:
    """`values` in consecutive slices of `CHUNK_ROWS`."""
    for first in range(0, len(values), CHUNK_ROWS):
        yield values[first : first + CHUNK_ROWS]


def chunked_array(source: Source, content: bytes, keys: tuple[str, ...]) -> ChunkedArray | None:
    """A ChunkedArray if `content` is an array whose first element is an object with `keys`."""
    start = len(content) - len(content.lstrip(_WHITESPACE))
    stop = len(content.rstrip(_WHITESPACE)) - 1
    if content[start : start + 1] != b"[" or content[stop : stop + 1] != b"]":
        return None
    match = _SEPARATOR.search(content, start, stop)
    if match is None:
        return None
    try:
        first = orjson.loads(content[start + 1 : match.start() + 1])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(first, dict) or not all(key in first for key in keys):
        return None
    return ChunkedArray(source, content, first, start + 1, stop)


@dataclass(frozen=True)
class LineRecords:
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
                records.append(orjson.loads(line))
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
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def looks_like_json(content: bytes) -> bool:
    """A JSON document or JSON Lines starts with an object or a list (else: a label file, XML...)."""
    return content.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
