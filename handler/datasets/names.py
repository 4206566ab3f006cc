"""Class names of a YOLO-style folder: `data.yaml` / `dataset.yaml` (`names:` as a list or a
mapping), `classes.txt`, or a darknet `.names` file (one name per line)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from handler.errors import DatasetError, quoted

# In order of preference; the shallowest file in the folder wins first.
NAMES_FILES = ("data.yaml", "data.yml", "dataset.yaml", "dataset.yml", "classes.txt")
NAMES_SUFFIX = ".names"
WHERE_NAMES = "data.yaml, dataset.yaml, classes.txt or a .names file in the folder"


def names_rank(basename: str) -> int | None:
    """The preference of a names file (lower first), or None for any other file."""
    if basename in NAMES_FILES:
        return NAMES_FILES.index(basename)
    return len(NAMES_FILES) if basename.endswith(NAMES_SUFFIX) else None


def names_files_near(location: str, levels: int = 2) -> list[str]:
    """The names files in the local folders above `location` (a dataset's file or folder), up to
    `levels` folders up, nearest first, as paths written from `location` (`labels/../obj.names`
    reads `obj.names`): where a fix may point when a folder has none (a CVAT YOLO export keeps
    `obj.names` beside `obj_train_data/`). Empty for a URI or a path that is not there."""
    if "://" in location:
        return []
    found: list[str] = []
    folder = location
    for _ in range(levels):
        folder = os.path.normpath(os.path.join(folder, os.pardir))
        try:
            entries = [entry for entry in Path(folder).iterdir() if entry.is_file()]
        except OSError:
            return found
        ranks = ((names_rank(entry.name), entry.name) for entry in entries)
        ranked = sorted((rank, name) for rank, name in ranks if rank is not None)
        found += [os.path.join(folder, name) for _, name in ranked]
    return found


def parse_names(where: str, text: str) -> dict[int, str]:
    """Class id → name, from the text of a names file called `where`."""
    if where.endswith((".yaml", ".yml")):
        return parse_yaml_names(where, text)
    return parse_line_names(where, text)


def parse_line_names(where: str, text: str) -> dict[int, str]:
    lines = [line.strip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    for number, name in enumerate(lines, start=1):
        if not name:
            raise DatasetError(f"{where}: line {number}: empty class name: expected one name a line")
    return dict(enumerate(lines))


def _load_yaml(where: str, text: str) -> Any:
    # Imported by name: PyYAML is needed only for YOLO folders, and ships no type stubs.
    yaml = importlib.import_module("yaml")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        reason = getattr(error, "problem", None) or error
        raise DatasetError(f"{where}: {at}expected valid YAML ({reason})") from None


def parse_yaml_names(where: str, text: str) -> dict[int, str]:
    document = _load_yaml(where, text)
    names = document.get("names") if isinstance(document, dict) else None
    if isinstance(names, list):
        return {class_id: str(name) for class_id, name in enumerate(names)}
    if isinstance(names, dict):
        by_id: dict[int, str] = {}
        for key, name in names.items():
            if not (type(key) is int or (isinstance(key, str) and key.isdigit())):
                raise DatasetError(f"{where}: names: key {quoted(key)}: expected a class id (0, 1, ...)")
            by_id[int(key)] = str(name)
        return by_id
    raise DatasetError(f"{where}: expected `names:` as a list of class names or a mapping of id to name")
