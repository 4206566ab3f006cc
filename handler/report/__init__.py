"""The report, by job; each package has one face (its `__init__`) and the rest is its own:

- `findings`: the typed findings, the registry of the features (handler/features/), and compare's model;
- `page`: the HTML pages drawn from them (templates, the compiled-template cache);
- `exports`: files for other tools: routing.json and class_map.json, written by finishers with the
  report, and the pre-label files `prelabel-eval export` writes from a stored report;
- `publish`: a report's life in the store (staging, parts, list, read, garbage collection);
- `finishers`: the registry of the work done once the shards are merged (the pipeline runs it;
  what a finisher plugs into is handler/sections/finishing.py).

Nothing here runs on a shard's worker: what the shards write (the ledger) is encoded by the
engine (`engine.ledger`) and put by a storage sink (`storage.sink`).
"""
