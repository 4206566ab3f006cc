"""Findings and outcome lines of fixed runs, captured once and compared later ("no behaviour change").

    python bench/equivalence.py capture DIR [--big]   # run every case, keep its findings and outcome lines
    python bench/equivalence.py compare DIR [--big]   # run them again; name every case that differs

Each case runs the node as a whole process (`python -m handler`, a fresh store). The findings are
kept without what differs by nature between two runs (`report_id`, `created_at`, `execution`); the
outcome lines byte for byte. Cases: pairs of the third-party files, and the bench's 5k workload
(`--big` adds the 50k one), generated as `bench/run.py` does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.workloads import WORKLOADS, ensure_data  # noqa: E402

THIRD_PARTY: Final = Path(__file__).resolve().parent.parent / "tests" / "data" / "third_party"
GENERATOR: Final = Path(__file__).resolve().parent / "gen_workload.py"
WORK_DIR: Final = ROOT / "bench" / ".work"
VOLATILE: Final = ("report_id", "created_at", "execution")

# name -> (GT, predictions, CONFIDENCE_THRESHOLD), paths relative to the third-party folder
THIRD_PARTY_CASES: Final = {
    "coco2014": (
        "coco_val2014_100/instances_val2014_100.json",
        "coco_val2014_100/instances_val2014_fakebbox100_results.json",
        "0",
    ),
    "coco2014-t05": (
        "coco_val2014_100/instances_val2014_100.json",
        "coco_val2014_100/instances_val2014_fakebbox100_results.json",
        "0.5",
    ),
    "coco2017-ignore": (
        "coco_val2017_img2299/gt_ignore_test.json",
        "coco_val2017_img2299/dt_ignore_test.json",
        "0",
    ),
    "cartucho": ("cartucho_mAP_85/input/ground-truth", "cartucho_mAP_85/input/detection-results", "0"),
    "podm-coco": (
        "cartucho_mAP_85/podm_tests_sample/groundtruths_coco.json",
        "cartucho_mAP_85/podm_tests_sample/detections_coco.json",
        "0",
    ),
    "voc-coco": (
        "voc_padilla_100/gts/coco_format_v1/instances_default.json",
        "voc_padilla_100/dets/coco_format/coco_dets.json",
        "0",
    ),
    "voc-pascal-coco": (
        "voc_padilla_100/gts/pascalvoc_format",
        "voc_padilla_100/dets/coco_format/coco_dets.json",
        "0",
    ),
    "padilla-toy": ("padilla_toy_7/groundtruths", "padilla_toy_7/detections", "0"),
    "sahi": ("sahi_visdrone_2/dataset.json", "sahi_visdrone_2/result.json", "0"),
}


def _cases(big: bool) -> dict[str, tuple[Path, Path, str]]:
    cases = {
        name: (THIRD_PARTY / gt, THIRD_PARTY / pred, threshold)
        for name, (gt, pred, threshold) in THIRD_PARTY_CASES.items()
    }
    for workload in ("default", "big") if big else ("default",):
        files = ensure_data(WORKLOADS[workload], WORK_DIR, GENERATOR)
        cases[f"workload-{workload}"] = (files.gt, files.results, WORKLOADS[workload].confidence_threshold)
    return cases


def _run(gt: Path, pred: Path, threshold: str) -> tuple[dict[str, object], bytes] | str:
    """The findings (volatile keys dropped) and outcome lines of one run, or its error line."""
    with tempfile.TemporaryDirectory() as store:
        env = {
            **os.environ,
            "GT_DATASET": str(gt),
            "PRED_DATASET": str(pred),
            "CONFIDENCE_THRESHOLD": threshold,
            "PRELABEL_STORE": store,
        }
        done = subprocess.run(
            [sys.executable, "-m", "handler", "-q"], env=env, cwd=ROOT, capture_output=True, check=False
        )
        if done.returncode != 0:
            return f"exit {done.returncode}: {done.stderr.decode(errors='replace').strip()}"
        report = next((Path(store) / "reports").iterdir())
        findings = json.loads((report / "findings.json").read_bytes())
        for key in VOLATILE:
            findings.pop(key, None)
        chunks = sorted((report / "outcomes").glob("*.jsonl")) if (report / "outcomes").is_dir() else []
        return findings, b"".join(chunk.read_bytes() for chunk in chunks)


def capture(folder: Path, big: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (gt, pred, threshold) in _cases(big).items():
        result = _run(gt, pred, threshold)
        if isinstance(result, str):
            (folder / f"{name}.error").write_text(result)
        else:
            (folder / f"{name}.findings.json").write_text(json.dumps(result[0], indent=1, sort_keys=True))
            (folder / f"{name}.outcomes.jsonl").write_bytes(result[1])
        print(f"captured {name}", file=sys.stderr)


def compare(folder: Path, big: bool) -> int:
    differing = 0
    for name, (gt, pred, threshold) in _cases(big).items():
        result = _run(gt, pred, threshold)
        if isinstance(result, str):
            expected_error = folder / f"{name}.error"
            same = expected_error.exists() and expected_error.read_text() == result
            detail = "" if same else f": {result}"
        else:
            kept = json.loads((folder / f"{name}.findings.json").read_text())
            now = json.loads(json.dumps(result[0], sort_keys=True))
            keys = sorted(k for k in set(kept) | set(now) if kept.get(k) != now.get(k))
            lines_same = (folder / f"{name}.outcomes.jsonl").read_bytes() == result[1]
            same = not keys and lines_same
            detail = f": findings keys {keys}" + ("" if lines_same else ", outcome lines")
        print(f"{'same' if same else 'DIFFERENT'} {name}{'' if same else detail}")
        differing += not same
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=("capture", "compare"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--big", action="store_true", help="also the 50k-image workload")
    args = parser.parse_args()
    if args.action == "capture":
        capture(args.folder, args.big)
        return 0
    return compare(args.folder, args.big)


if __name__ == "__main__":
    raise SystemExit(main())
