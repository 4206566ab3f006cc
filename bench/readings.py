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
    "class names as Open Images spells them, the rest plural": [
        mixups.spelled(lambda n: mixups.OPEN_IMAGES.get(n) or mixups.plural(n).title())
    ],
}
# A step applied to part of the data: no option applies the reading (the part is to write again).
PARTS: Final = {
    "corners on every other box of each image": [mixups.on_boxes(mixups.corners)],
    "every other box of each image x2": [mixups.on_boxes(mixups.scaled(2))],
    "minimal-rectangle letterbox 640/32 on 40% of the images": [
        mixups.on_images(0.4, mixups.letterboxed_rect(640, 32))
    ],
    "corners in a letterbox 640 on 40% of the images": [
        mixups.on_images(0.4, mixups.chained(mixups.letterboxed(640), mixups.corners))
    ],
}
# Masks (the pair's GT polygons and fakesegm RLE results, scored on masks: clean 0.30): the
# predictions' edits, and the scale the GT's polygon points are written in (None: pixels).
MASKS: Final = {
    "mask runs counted row by row (masks)": ([mixups.rle_row_major], None),
    "GT polygon points normalised (masks)": ([], 1.0),
    "GT polygon points in percent (masks)": ([], 100.0),
    "runs row by row AND GT points normalised (masks)": ([mixups.rle_row_major], 1.0),
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
        for i, (name, edits) in enumerate({**MISTAKES, **PARTS}.items())
    ]
    wrong_gt = work / "gt_corners.json"
    wrong_gt.write_bytes(mixups.orjson.dumps(mixups.gt_corners(mixups.orjson.loads(gt.read_bytes()))))
    rows.append(("the ground truth written with corners", results, wrong_gt))
    segm = gt.parent / "instances_val2014_fakesegm100_results.json"
    for i, (name, (edits, scale)) in enumerate(MASKS.items()):
        truth = gt
        if scale is not None:
            truth = work / f"gt_masks_{i}.json"
            document = mixups.orjson.loads(gt.read_bytes())
            truth.write_bytes(mixups.orjson.dumps(mixups.gt_polygons_in(scale)(document)))
        rows.append((name, mixups.write_mistake(gt, segm, edits, work / f"masks_{i}.json"), truth))
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
        said = " + ".join(f"{p.key}={p.value}" for p in found.reading.parts)
        if found.reading.partial:  # no option applies a reading to part of the rows
            where = next(p.part for p in found.reading.parts if p.part).split(" (")[0]
            said, shown = f"{said} {where}", "-"
        else:
            shown = f"{weigh(truth, pred, work / 'store', **options).score:.2f}"
        print(f"| {name} | {weighed.score:.2f} | {said} | {found.under.score:.2f} | {shown} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mistakes"]:
        with tempfile.TemporaryDirectory() as folder:
            mistakes_table(Path(folder))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
