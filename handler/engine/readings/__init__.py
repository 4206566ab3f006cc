"""Other readings of a side's rows: one module per kind of export mistake (box convention and axis
order, coordinate frame, class ids). `execution.rescore.best_reading` searches them, both sides,
jointly, and re-scores the promising ones with the same engine.
"""

from handler.engine.readings.reading import Combined, Reading

__all__ = ["Combined", "Reading"]
