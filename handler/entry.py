"""What the command-line entry points (`python -m handler`, `prelabel-eval`) set before numpy is
imported. Imported first by both; the Python API leaves the caller's process as it is.

numpy asks the kernel for transparent huge pages on every large array (`madvise`). On kernels
whose huge-page defrag setting is `madvise` (Debian's default), each fault of a fresh array then
compacts and zeroes 2 MiB synchronously: the 50k-image run spent ~0.7 s more of system time and
~0.4 s more of wall filling its box columns (bench/NOTES.md). A run's arrays are written once and
read a few times, so huge pages buy it nothing. A value the user set is kept.
"""

import os

os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
