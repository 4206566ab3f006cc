"""The benchmark's one command: `python bench/run.py [--workloads default,dense,conf0,big] [--repeats 3]`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import main

if __name__ == "__main__":
    sys.exit(main())
