"""One class, spelled as the public datasets and trainers spell it: what a class name is compared by.

A name is folded to its letters and digits (case, spaces, punctuation, underscores and hyphens
gone), made singular (`persons`, `people` → `person`; `buses` → `bus`), and a public dataset's own
name for a class replaced by COCO's: Pascal VOC's (`aeroplane`, `motorbike`, `sofa`,
`tvmonitor`), Open Images' (`Television`, `Mobile phone`, `Doughnut`, `Computer mouse`,
`Houseplant`, `Flying disc`, `Cattle`) and Objects365's (`Monitor/TV`, `Handbag/Satchel`,
`Dinning Table`, `Orange/Tangerine`, `Skiboard`, `Luggage`, `Hair Dryer`). Only names that mean
the same class are listed: a broader or narrower class (Objects365's `Van` or `SUV` for a car) is
left to the matches.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

# COCO's name (as its letters) → the other datasets' names for the same class (as written there).
SYNONYMS: Final = {
    "airplane": ("aeroplane", "plane"),
    "motorcycle": ("motorbike",),
    "couch": ("sofa",),
    "tv": ("tvmonitor", "television", "monitor/tv"),
    "cellphone": ("mobile phone", "cell phone", "smartphone"),
    "diningtable": ("dinning table", "kitchen & dining room table"),
    "pottedplant": ("houseplant", "potted plant"),
    "person": ("human",),
    "donut": ("doughnut",),
    "hairdrier": ("hair dryer",),
    "sportsball": ("ball",),
    "frisbee": ("flying disc",),
    "skis": ("ski", "skiboard"),
    "cow": ("cattle",),
    "microwave": ("microwave oven",),
    "mouse": ("computer mouse",),
    "keyboard": ("computer keyboard",),
    "remote": ("remote control",),
    "teddybear": ("teddy",),
    "handbag": ("handbag/satchel",),
    "bowl": ("bowl/basin",),
    "orange": ("orange/tangerine",),
    "suitcase": ("luggage", "luggage and bags"),
    "bicycle": ("bike",),
    "refrigerator": ("fridge",),
    "knife": ("kitchen knife",),
    "firehydrant": ("hydrant",),
}
# Plurals a rule would not undo.
IRREGULAR: Final = {
    "people": "person",
    "persons": "person",
    "mice": "mouse",
    "knives": "knife",
    "men": "man",
    "women": "woman",
    "children": "child",
    "geese": "goose",
    "teeth": "tooth",
    "feet": "foot",
}


def letters(name: str) -> str:
    """The name's letters and digits, case folded."""
    return re.sub(r"[^0-9a-z]+", "", name.casefold())


def _variants(name: str) -> set[str]:
    """The name's letters with its last word as written and as each plural ending undone would
    leave it (`horses`: horses, horse, hors; `buses`: buses, buse, bus): one of them is the
    singular, and two names of one class share it."""
    words = re.findall(r"[0-9a-z]+", name.casefold())
    if not words:
        return {""}
    head, last = "".join(words[:-1]), words[-1]
    endings = {last, IRREGULAR.get(last, last)}
    if last.endswith("s") and len(last) > 2:
        endings.add(last[:-1])
    if last.endswith("es") and len(last) > 3:
        endings.add(last[:-2])
    if last.endswith("ies") and len(last) > 4:
        endings.add(last[:-3] + "y")
    return {head + ending for ending in endings}


def _canonical() -> dict[str, str]:
    return {
        variant: coco
        for coco, others in SYNONYMS.items()
        for name in (coco, *others)
        for variant in _variants(name)
    }


CANONICAL: Final = _canonical()


# Every written class is compared with every GT class: each name's forms made once.
@lru_cache(maxsize=1 << 14)
def forms(name: str) -> frozenset[str]:
    """The forms a class name is compared by across spellings: its letters and digits, case
    folded, as written and made singular, a public dataset's synonym replaced by COCO's name.
    Two names spell one class when their forms meet."""
    return frozenset(CANONICAL.get(variant, variant) for variant in _variants(name))
