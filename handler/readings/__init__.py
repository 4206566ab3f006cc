"""The readings of both sides, in one home: the options given, applied to the rows read (`sides`),
and the search for a clearly better reading after the main evaluation (`rescore`: the map of
each side's geometry, its candidates, their verdict in `verdict`). One module per kind of export
mistake (box convention and axis order, coordinate frame, class ids, scores, groups of images).
The shard pass in `handler.execution` is the caller: the datasets below read the files, the
readings read their rows again.
"""

from handler.readings.reading import Combined, Reading

__all__ = ["Combined", "Reading"]
