"""Reading a dataset never reserves the size limit, so small files read under an
address-space cap (`ulimit -v`, a container with strict overcommit) far below that limit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.builders import write_tree
from helpers.capped import run_capped

# Below the 4 GiB file limit (the old `read(limit + 1)` could never fit), above what a run needs.
ADDRESS_SPACE_CAP = 3 << 30


def _run_capped(tmp_path: Path, gt: Path, pred: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_capped(
        tmp_path / "store", ADDRESS_SPACE_CAP, GT_DATASET=str(gt), PRED_DATASET=str(pred), **env
    )


def _yolo_folders(tmp_path: Path, images: int) -> tuple[Path, Path]:
    gt = {f"img{i}.txt": "0 0.5 0.5 0.2 0.2\n" for i in range(images)}
    pred = {f"img{i}.txt": "0 0.5 0.5 0.2 0.2 0.9\n" for i in range(images)}
    return (
        write_tree(tmp_path / "gt", {"classes.txt": "car\n", **gt}),
        write_tree(tmp_path / "pred", pred),
    )


def test_a_folder_of_small_files_reads_under_an_address_space_cap(tmp_path: Path) -> None:
    gt, pred = _yolo_folders(tmp_path, 64)  # more files than read threads: every thread reads
    run = _run_capped(tmp_path, gt, pred)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Production-grade" in run.stdout.splitlines()[-1]


def test_a_file_over_the_limit_is_one_line_under_the_cap(tmp_path: Path) -> None:
    gt, pred = _yolo_folders(tmp_path, 3)
    run = _run_capped(tmp_path, gt, pred, PRELABEL_MAX_DATASET_BYTES="10")
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("error: ") and "larger than 10 bytes" in line
