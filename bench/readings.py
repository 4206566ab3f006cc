"""False alarms of the readings search: honest weak models get no "did you mean".

Each trial writes a weak model of a real ground truth (boxes missed, jittered, confused and
invented at random rates, in the GT's own frame and convention: nothing to re-read) and counts
the runs where a reading is proposed. `python bench/readings.py [TRIALS]` prints the rate per
ground truth and overall with its 95 % upper bound (no alarm in n trials: 3/n, the rule of three).
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

from helpers.mixups import random_weak_model, weigh  # type: ignore[import-not-found]  # noqa: E402

THIRD_PARTY: Final = Path("/work/shared/data/third_party")
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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
