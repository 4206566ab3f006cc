"""The class mix-up finder (issue 18) on small hand-made tables: permutations, shifts, and what is not one."""

from __future__ import annotations

import numpy as np

from handler.engine.class_mapping import find_class_mapping
from handler.engine.outcomes import Outcome


def _tables(
    names: tuple[str, ...], same: dict[str, int], confused: list[tuple[str, str, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """(n, 5) counts with `same` correct pairs per class, and (m, 3) confusions (GT, predicted, count)."""
    index = {name: i for i, name in enumerate(names)}
    counts = np.zeros((len(names), len(Outcome)), dtype=np.int64)
    for name, count in same.items():
        counts[index[name], Outcome.CORRECT] = count
    rows = [(index[gt], index[pred], count) for gt, pred, count in confused]
    return counts, np.array(rows, dtype=np.int64).reshape(-1, 3)


def test_a_swap_of_two_classes_is_found_with_its_counts() -> None:
    names = ("cat", "dog", "car")
    counts, confusions = _tables(
        names, {"car": 2}, [("cat", "dog", 10), ("dog", "cat", 8), ("cat", "car", 1)]
    )
    found = find_class_mapping(names, counts, confusions)
    assert found is not None
    assert found.pairs == (("dog", "cat", 10), ("cat", "dog", 8))
    assert (found.matched, found.confused, found.mapped, found.shift) == (21, 19, 20, None)


def test_ids_shifted_by_one_are_named_as_a_shift() -> None:
    names = ("1", "2", "3", "0")
    counts, confusions = _tables(names, {}, [("1", "0", 6), ("2", "1", 5), ("3", "2", 4)])
    found = find_class_mapping(names, counts, confusions)
    assert found is not None and found.shift == 1


def test_mostly_right_classes_or_scattered_confusions_are_no_mapping() -> None:
    names = ("a", "b", "c")
    counts, confusions = _tables(names, {"a": 30, "b": 30}, [("a", "b", 10)])
    assert find_class_mapping(names, counts, confusions) is None  # most pairs are same-class
    counts, confusions = _tables(
        names, {}, [("a", "b", 3), ("a", "c", 3), ("b", "a", 3), ("b", "c", 3), ("c", "a", 3), ("c", "b", 3)]
    )
    assert find_class_mapping(names, counts, confusions) is None  # no one-to-one mapping
    counts, confusions = _tables(names, {}, [("a", "b", 4)])
    assert find_class_mapping(names, counts, confusions) is None  # too few pairs to say


def test_an_empty_table_is_no_mapping() -> None:
    counts, confusions = _tables((), {}, [])
    assert find_class_mapping((), counts, confusions) is None
