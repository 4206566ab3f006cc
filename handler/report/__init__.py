"""The report, by job; each package has one face (its `__init__`) and the rest is its own:

- `findings`: the typed findings (model, sections, warnings) and compare's model;
- `page`: the HTML pages drawn from them (charts, templates, the compiled-template cache);
- `exports`: files for other tools built from a run (routing.json);
- `publish`: a report's life in the store (staging, parts, list, read, garbage collection).

Nothing here runs on a shard's worker: what the shards write (the outcome lines) is encoded by the
engine (`engine.outcome_lines`) and put by a storage sink (`storage.sink`).
"""
