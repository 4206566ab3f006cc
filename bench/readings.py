"""False alarms of the readings search: honest weak models get no "did you mean".

Each trial writes a weak model of a real ground truth (boxes missed, jittered, confused and
invented at random rates, in the GT's own frame and convention: nothing to re-read) and counts
the runs where a reading is proposed. `python bench/readings.py [TRIALS]` prints the rate per
ground truth and overall with its 95 % upper bound (no alarm in n trials: 3/n, the rule of three).
`python bench/readings.py --mistakes` prints, on the COCO val2014 pair, each export mistake's score
as read, the reading proposed, its score, and the score its options give when applied.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from helpers import mixups  # type: ignore[import-not-found]  # noqa: E402
from helpers.mixups import random_weak_model, weigh  # type: ignore[import-not-found]  # noqa: E402

THIRD_PARTY: Final = ROOT / "tests" / "data" / "third_party"
GROUND_TRUTHS: Final = (
    THIRD_PARTY / "coco_val2014_100" / "instances_val2014_100.json",
    THIRD_PARTY / "voc_padilla_100" / "gts" / "coco_format_v1" / "instances_default.json",
)


def trial(gt: Path, seed: int, work: Path) -> tuple[float, str | None]:
    """One weak model's score and the reading proposed for it (None: no alarm)."""
    pred = random_weak_model(gt, seed, work / f"weak_{seed}.json")
    weighed = weigh(gt, pred, work / "store", threshold="0")
    found = weighed.found
    said = None if found is None else " ".join(f"{p.key}={p.value}" for p in found.reading.parts)
    return weighed.score, said


def main(trials: int) -> None:
    alarms = 0
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for gt in GROUND_TRUTHS:
            raised = [(seed, *trial(gt, seed, work)) for seed in range(trials)]
            found = [row for row in raised if row[2] is not None]
            alarms += len(found)
            scores = [score for _, score, _ in raised]
            print(
                f"{gt.parent.name}: {len(found)} alarms in {trials} weak models "
                f"(scores {min(scores):.2f}-{max(scores):.2f})"
            )
            for seed, score, reading in found:
                print(f"  seed {seed}: score {score:.3f}, proposed {reading}")
    total = trials * len(GROUND_TRUTHS)
    bound = 3 / total if not alarms else None
    print(f"false alarms: {alarms}/{total}" + (f" (95% upper bound {bound:.1%})" if bound else ""))


# Each mistake as a real tool or script makes it (tests/readings/test_readings.py tests each).
MISTAKES: Final = {
    "corners AND 0-based class places (torchvision-style dump)": [mixups.corners, mixups.yolo_index],
    "minimal-rectangle letterbox 640, stride 32": [mixups.letterboxed_rect(640, 32)],
    "TF normalised [ymin, xmin, ymax, xmax]": [mixups.tf_normalised],
    "class ids as 1-based places (YOLO validator)": [mixups.one_based],
    "square letterbox 640 at the top-left (YOLOX)": [mixups.letterboxed_top_left(640)],
    "sizes swapped, (h, w) for (w, h)": [mixups.normalised_hw],
    "bbox as [x1, y1, x2, y2]": [mixups.corners],
    "YOLO index as category_id": [mixups.yolo_index],
    "normalised boxes in a pixel file": [mixups.normalised],
    "every coordinate x2": [mixups.scaled(2)],
}


def mistakes_table(work: Path) -> None:
    """The closing note's table on the COCO val2014 pair: as read, the reading proposed, the score
    it gives, and the score its options give applied."""
    gt = GROUND_TRUTHS[0]
    results = gt.parent / "instances_val2014_fakebbox100_results.json"
    print("| mistake | score as read | reading proposed | score under it | score applied |")
    print("|---|---|---|---|---|")
    rows = [
        (name, mixups.write_mistake(gt, results, edits, work / f"wrong_{i}.json"), gt)
        for i, (name, edits) in enumerate(MISTAKES.items())
    ]
    wrong_gt = work / "gt_corners.json"
    wrong_gt.write_bytes(mixups.orjson.dumps(mixups.gt_corners(mixups.orjson.loads(gt.read_bytes()))))
    rows.append(("the ground truth written with corners", results, wrong_gt))
    for name, pred, truth in rows:
        weighed = weigh(truth, pred, work / "store")
        found = weighed.found
        if found is None:
            print(f"| {name} | {weighed.score:.2f} | none | - | - |")
            continue
        options = {}
        for part in found.reading.parts:
            value = part.value
            if part.class_map:
                value = str(work / "class_map.json")
                Path(value).write_text(mixups.orjson.dumps(dict(part.class_map)).decode())
            options[part.key] = value
        applied = weigh(truth, pred, work / "store", **options)
        said = " + ".join(f"{p.key}={p.value}" for p in found.reading.parts)
        print(f"| {name} | {weighed.score:.2f} | {said} | {found.under.score:.2f} | {applied.score:.2f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mistakes"]:
        with tempfile.TemporaryDirectory() as folder:
            mistakes_table(Path(folder))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
