"""Parse floor, plain: `orjson.loads` of both files, as any script that reads them does."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

if __name__ == "__main__":
    for path in sys.argv[1:3]:
        orjson.loads(Path(path).read_bytes())
