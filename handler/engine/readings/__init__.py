"""Other readings of the predictions (issue 24): one module per kind of export mistake.

A new kind is one module with a `FAMILY` (its option, pre-check and candidates) and one line in
`FAMILIES`. `execution.rescore.best_reading` re-scores the candidates with the same engine.
"""

from __future__ import annotations

from typing import Final

from handler.engine.readings import boxes, classes, frames
from handler.engine.readings.reading import Evidence, Family, Reading

FAMILIES: Final[tuple[Family, ...]] = (
    boxes.FAMILY,
    frames.FAMILY,
    classes.FAMILY,
)

__all__ = ["FAMILIES", "Evidence", "Family", "Reading"]
