"""Benchmarks of the node against the tools users would pick instead: `python bench/run.py`."""
