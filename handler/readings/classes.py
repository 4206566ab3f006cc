"""The class ids: as read, the one-to-one mapping the matches follow, a list index, counted from 0 or 1.

A class reading maps each class as the predictions wrote it (a COCO results list's
`category_id`, else the class name read) to a GT class; rows it does not name keep their class.
It is written out as `class_map.json`, which the user reviews and passes back with
`--pred-class-map` (PRED_CLASS_MAP). Rows skipped because their id named no category are read
again: a YOLO index written as `category_id` names many ids the COCO file does not have.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Final

import numpy as np
import orjson
from msgspec.structs import replace

from handler.boxes import UNKNOWN_CLASS, IntArray, Parsed, ParsedRows
from handler.readings import spellings
from handler.readings.reading import Reading, Transform

KEY: Final = "PRED_CLASS_MAP"
FILE: Final = "class_map.json"
# A pair of classes is mapped on the evidence of at least this many matches.
PAIRS_MIN: Final = 3


def written_keys(parsed: Parsed, rows: ParsedRows | None = None) -> tuple[IntArray, list[str]]:
    """Each row's class as written (an index into the returned keys; -1: none)."""
    rows = parsed.rows if rows is None else rows
    if rows.written_class is None:
        return rows.class_id, list(parsed.class_names)
    written = rows.written_class
    keys, inverse = np.unique(written, return_inverse=True)
    index = np.where(written != -1, inverse.reshape(-1), -1)
    texts = rows.written_names
    return index.astype(np.int64), [str(key) if key >= -1 else texts[-2 - key] for key in keys.tolist()]


def _mapped(class_map: Mapping[str, str]) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        key_of_row, keys = written_keys(parsed)
        names = list(parsed.class_names)
        index = {name: i for i, name in enumerate(names)}
        for gt_class in class_map.values():
            if gt_class not in index:
                index[gt_class] = len(names)
                names.append(gt_class)
        target_of_key = np.array(
            [index.get(class_map.get(key, ""), -1) for key in keys] + [-1], dtype=np.int64
        )
        target = target_of_key[key_of_row]  # -1 (the appended end) for rows with no key
        class_id = np.where(target >= 0, target, rows.class_id)
        found = {row for row, why in rows.reasons.items() if why == UNKNOWN_CLASS and target[row] >= 0}
        rejected = {row: why for row, why in rows.rejected.items() if row not in found}
        reasons = {row: why for row, why in rows.reasons.items() if row not in found}
        return replace(rows, class_id=class_id, rejected=rejected, reasons=reasons), names

    return transform


def reading(class_map: Mapping[str, str], says: str = "class ids mapped by the class map") -> Reading:
    pairs = tuple(sorted(class_map.items(), key=lambda pair: (len(pair[0]), pair[0])))
    return Reading("classes", KEY, FILE, says, _mapped(dict(pairs)), pairs)


def class_map_json(pairs: tuple[tuple[str, str], ...]) -> bytes:
    return orjson.dumps(dict(pairs), option=orjson.OPT_INDENT_2)


def _greedy_one_to_one(matrix: IntArray, least: int = PAIRS_MIN) -> list[tuple[int, int]]:
    """(GT, predicted) cells of at least `least` taken largest first, each row and column once
    (ties: the diagonal)."""
    gts, preds = np.nonzero(matrix >= least)
    order = np.lexsort((gts != preds, -matrix[gts, preds]))
    taken_gt, taken_pred, found = set(), set(), []
    for g, p in zip(gts[order].tolist(), preds[order].tolist(), strict=True):
        if g not in taken_gt and p not in taken_pred:
            taken_gt.add(g)
            taken_pred.add(p)
            found.append((g, p))
    return found


def _as_written(parsed: Parsed, by_name: Mapping[str, str]) -> dict[str, str]:
    """A map of read class names → GT classes, in the keys the predictions wrote."""
    return {key: by_name[name] for key, name in read_as_map(parsed).items() if name in by_name}


def mapping_candidate(
    parsed: Parsed, names: list[str], matrix: IntArray, least: int = PAIRS_MIN
) -> Reading | None:
    """The one-to-one mapping most class-agnostic matches follow, when it is not the identity.

    `matrix` counts the matched pairs by (GT class, predicted class) over the paired `names`."""
    crossed = {names[p]: names[g] for g, p in _greedy_one_to_one(matrix, least) if g != p}
    if not crossed:
        return None
    class_map = _as_written(parsed, crossed)
    return matched_reading(class_map) if class_map else None


def matched_reading(class_map: Mapping[str, str], spelled: int = 0, last: bool = False) -> Reading:
    """The class reading of a mapping the matches follow, said as such (`spelled` of its classes
    by their spelling, and the `last` one by elimination)."""
    # the wording home is above the engine: the one plural said here
    moved = f"{len(class_map)} {'class' if len(class_map) == 1 else 'classes'} moved"
    written = "ids" if _numeric(list(class_map)) is not None else "names"
    how = [f"{spelled} by their spelling"] if spelled else []
    how += ["the last one left to the last GT class left"] if last else []
    said = f"{moved}: " + ", ".join(how) if how else moved
    return reading(class_map, f"class {written} mapped one to one as the matched boxes say ({said})")


def own_mapping_candidate(parsed: Parsed, names: list[str], matrix: IntArray, own: Reading) -> Reading | None:
    """The mapping the matches follow for the classes `own` reads as their own, on any match: no
    class of the categories could score their rows, so one match is evidence. The classes found
    keep theirs (only their diagonal counts: a model's confusion never moves them)."""
    is_own = np.isin(np.array(names, dtype=object), [key for key, _ in own.class_map])
    counted = np.where(is_own[None, :] | np.eye(len(names), dtype=bool), matrix, 0)
    return mapping_candidate(parsed, names, counted, least=1)


def unknown_keys(parsed: Parsed) -> list[str]:
    """The classes as written that name no class of the categories (their rows skipped for it)."""
    unknown = np.fromiter(
        (row for row, why in parsed.rows.reasons.items() if why == UNKNOWN_CLASS), dtype=np.int64
    )
    key_of_row, keys = written_keys(parsed)
    known = set(parsed.class_names)
    found = (keys[k] for k in np.unique(key_of_row[unknown]).tolist() if k >= 0)
    return [key for key in found if key not in known]


def as_own_classes(parsed: Parsed) -> Reading | None:
    """Each class written that names no class of the categories read as a class of its own (named
    as written), so that the class-agnostic matches can say which GT class it is (a trainer's own
    label strings); None when every row's class was found."""
    own = {key: key for key in unknown_keys(parsed)}
    return reading(own, "classes the categories do not have read as their own") if own else None


def spelled_map(parsed: Parsed, listed: list[str]) -> dict[str, str]:
    """The classes written that name no class of the categories, each read as the GT class it
    spells another way (`spelled_as`), where one does."""
    return {key: gt for key in unknown_keys(parsed) if (gt := spelled_as(key, listed)) is not None}


def eliminated(parsed: Parsed, listed: list[str], class_map: Mapping[str, str]) -> dict[str, str]:
    """The last pair of a one-to-one map otherwise complete: when a map was found, one class as
    written is left unread and one GT class unclaimed (by the map, or by a class read as written),
    the one read as the other."""
    left = unknown_keys(parsed)
    claimed = set(class_map.values()) | set(read_as_map(parsed).values())
    unclaimed = [name for name in listed if name not in claimed]
    if not class_map or len(left) != 1 or len(unclaimed) != 1:
        return {}
    return {left[0]: unclaimed[0]}


def _numeric(keys: list[str]) -> IntArray | None:
    if not keys or not all(key.lstrip("-").isdigit() for key in keys):
        return None
    return np.array([int(key) for key in keys], dtype=np.int64)


def read_as_map(parsed: Parsed) -> dict[str, str]:
    """The class each written key was read as (what a candidate must differ from)."""
    key_of_row, keys = written_keys(parsed)
    rows = parsed.rows
    read = (rows.class_id >= 0) & (key_of_row >= 0)
    width = max(len(parsed.class_names), 1)
    pairs = np.unique(key_of_row[read] * width + rows.class_id[read])  # a few per class
    return {
        keys[k]: parsed.class_names[c]
        for k, c in zip((pairs // width).tolist(), (pairs % width).tolist(), strict=True)
    }


def id_candidates(parsed: Parsed, listed: list[str], gt_ids: dict[int, str] | None) -> list[Reading]:
    """Numeric ids read another way: the place in the GT's class list `listed` (from 0 or 1), or
    the GT's own ids shifted by one (counted from another start)."""
    _, keys = written_keys(parsed)
    ids = _numeric(keys)
    if ids is None:
        return []
    options: list[tuple[str, dict[int, str]]] = [
        ("class ids as the place in the GT's class list, counted from 0", dict(enumerate(listed))),
        ("class ids as the place in the GT's class list, counted from 1", dict(enumerate(listed, 1))),
    ]
    if gt_ids:
        own = gt_ids
        options += [
            (
                "class ids counted from 0 where the GT's count from 1",
                {i - 1: name for i, name in own.items()},
            ),
            (
                "class ids counted from 1 where the GT's count from 0",
                {i + 1: name for i, name in own.items()},
            ),
        ]
    as_read = read_as_map(parsed)
    found = []
    for says, by_id in options:
        class_map = {str(i): by_id[i] for i in ids.tolist() if i in by_id}
        if class_map and class_map != {key: as_read[key] for key in class_map if key in as_read}:
            found.append(reading(class_map, says))
    return found


def spelled_as(key: str, listed: list[str]) -> str | None:
    """The GT class `key` spells another way (`spellings.forms`): the one spelled with the same
    letters, else the only one whose forms meet its; None when none or several do."""
    by_letters, by_form = _spelling_index(tuple(listed))
    exact = by_letters.get(spellings.letters(key))
    if exact is not None:
        return exact
    found = {name for form in spellings.forms(key) for name in by_form.get(form, ())}
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=8)
def _spelling_index(listed: tuple[str, ...]) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The GT classes by their letters (the first of a spelling), and by each of their forms."""
    by_letters: dict[str, str] = {}
    by_form: dict[str, tuple[str, ...]] = {}
    for name in listed:
        by_letters.setdefault(spellings.letters(name), name)
        for form in spellings.forms(name):
            by_form[form] = (*by_form.get(form, ()), name)
    return by_letters, by_form


def name_candidate(parsed: Parsed, listed: list[str]) -> Reading | None:
    """Each class written under another spelling of a GT class name (case, spaces, punctuation,
    plurals, a public dataset's synonym) read as that GT class."""
    _, keys = written_keys(parsed)
    read_as = read_as_map(parsed)
    class_map = {
        key: gt_name
        for key in keys
        if (gt_name := spelled_as(key, listed)) is not None and read_as.get(key) != gt_name
    }
    if not class_map:
        return None
    return reading(class_map, f"class names spelled as the GT spells them ({len(class_map)} classes)")


def candidates(
    parsed: Parsed, names: list[str], matrix: IntArray, listed: list[str], gt_ids: dict[int, str] | None
) -> list[Reading]:
    """The class readings worth trying: numeric ids as places or shifted ids, names spelled
    another way, and the mapping the matched pairs follow."""
    found = [name_candidate(parsed, listed), mapping_candidate(parsed, names, matrix)]
    return id_candidates(parsed, listed, gt_ids) + [reading for reading in found if reading is not None]
