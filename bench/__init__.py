"""Benchmarks of the node against the tools users would pick instead (issue 6): `python bench/run.py`."""
