"""The report, by job; each package has one face (its `__init__`) and the rest is its own:

- `findings`: the typed findings (model, sections and their figures, warnings) and compare's model;
- `page`: the HTML pages drawn from them (templates, the compiled-template cache);
- `exports`: files for other tools: routing.json and class_map.json, written by finishers with the
  report, and the pre-label files `prelabel-eval export` writes from a stored report;
- `publish`: a report's life in the store (staging, parts, list, read, garbage collection);
- `finishing` and `finishers`: work done once the shards are merged (what a finisher needs and
  gives; the registry, which the pipeline runs);
- `charts`: the geometry of the pages' SVG figures, below the findings so a section can draw.

Nothing here runs on a shard's worker: what the shards write (the ledger) is encoded by the
engine (`engine.ledger`) and put by a storage sink (`storage.sink`).
"""
