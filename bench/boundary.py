"""Does boundary IoU tell "accept" from "fix the outline" better than mask IoU? `python bench/boundary.py`.

Boundary IoU (Cheng et al., CVPR 2021, as faster-coco-eval computes it: a mask's band of pixels
within d of its contour, d = 2 % of the image diagonal, and the IoU of the two bands) against mask
IoU (pycocotools), on two sets:

- synthetic: every non-crowd GT object of the COCO val2014 sample, its outline perturbed by a
  known amount m pixels (shifted by m, grown or shrunk by m, a bump or a dent m deep at one point
  of its outline). The labeler fixes the outline when it is off by `FIX_FROM` pixels or more
  somewhere; below that they accept it. Each measure's ROC AUC for that split, and its best
  balanced accuracy over thresholds (mask IoU also at the node's IOU_PERFECT 0.8);
- the COCO pair: cocoapi's mask results matched to the GT (mask IoU ≥ 0.3, same class, the node's
  greedy is not needed to count the disagreements): how many pairs each measure calls "accept"
  and how far off the outline is (the largest distance from one outline to the other, pixels)
  where they disagree.

Needs pycocotools, faster-coco-eval and scipy (the test extra).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pycocotools.mask as coco_mask
from faster_coco_eval.core.mask import rleToBoundary
from scipy import ndimage  # type: ignore[import-untyped]

ROOT: Final = Path(__file__).resolve().parent.parent
PAIR: Final = ROOT / "tests" / "data" / "third_party" / "coco_val2014_100"
RATIO: Final = 0.02
IOU_PERFECT: Final = 0.8
# An outline off by this many pixels somewhere is fixed by the labeler; closer is accepted.
FIX_FROM: Final = 4
# Or, where the labeler works zoomed to the object, off by this share of its size (√area).
RELATIVE: Final = 0.05
MAGNITUDES: Final = tuple(range(0, 11))
KINDS: Final = ("shift", "grow", "bump")
SEED: Final = 48
Bitmap = npt.NDArray[np.uint8]


def _rle(bitmap: Bitmap) -> dict[str, Any]:
    encoded: dict[str, Any] = coco_mask.encode(np.asfortranarray(bitmap))
    return encoded


def _ious(gt: dict[str, Any], pred: dict[str, Any]) -> tuple[float, float]:
    """(mask IoU, boundary IoU) of one pair."""
    mask = float(coco_mask.iou([pred], [gt], [0])[0][0])
    bands = [rleToBoundary(rle, RATIO) for rle in (gt, pred)]
    return mask, float(coco_mask.iou([bands[1]], [bands[0]], [0])[0][0])


def _perturbed(bitmap: Bitmap, kind: str, m: int, rng: np.random.Generator) -> Bitmap:
    """The object with its outline off by m pixels: shifted, grown or shrunk, or a bump or dent."""
    if m == 0:
        return bitmap
    if kind == "shift":
        angle = rng.uniform(0, 2 * np.pi)
        dy, dx = round(m * np.sin(angle)), round(m * np.cos(angle))
        return np.roll(np.roll(bitmap, dy, axis=0), dx, axis=1)
    disc = np.hypot(*np.mgrid[-m : m + 1, -m : m + 1]) <= m
    grow = bool(rng.integers(2))
    if kind == "grow":
        changed = ndimage.binary_dilation(bitmap, disc) if grow else ndimage.binary_erosion(bitmap, disc)
        return np.asarray(changed, dtype=np.uint8)
    edge = np.argwhere(bitmap & ~ndimage.binary_erosion(bitmap))
    y, x = edge[rng.integers(len(edge))]
    spot = np.zeros_like(bitmap, dtype=bool)
    spot[max(0, y - m) : y + m + 1, max(0, x - m) : x + m + 1] = disc[
        max(0, m - y) : 2 * m + 1 - max(0, y + m + 1 - bitmap.shape[0]),
        max(0, m - x) : 2 * m + 1 - max(0, x + m + 1 - bitmap.shape[1]),
    ]
    return np.asarray((bitmap.astype(bool) | spot) if grow else (bitmap.astype(bool) & ~spot), dtype=np.uint8)


def _auc(accept: npt.NDArray[np.float64], fix: npt.NDArray[np.float64]) -> float:
    """P(an accepted pair's measure > a fixed pair's), ties half: the Mann-Whitney AUC."""
    values = np.concatenate((accept, fix))
    ranks = np.empty(len(values))
    order = np.argsort(values, kind="stable")
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):  # ties share their mean rank
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return float(
        (ranks[: len(accept)].sum() - len(accept) * (len(accept) + 1) / 2) / (len(accept) * len(fix))
    )


def _balanced(score: npt.NDArray[np.float64], fix: npt.NDArray[np.bool_], threshold: float) -> float:
    said_accept = score >= threshold
    return float((np.mean(said_accept[~fix]) + np.mean(~said_accept[fix])) / 2)


def _best(score: npt.NDArray[np.float64], fix: npt.NDArray[np.bool_]) -> tuple[float, float]:
    """(best balanced accuracy, its threshold) over every value the measure takes."""
    candidates = np.unique(score)
    accuracies = [_balanced(score, fix, t) for t in candidates]
    best = int(np.argmax(accuracies))
    return accuracies[best], float(candidates[best])


def synthetic(gt: dict[str, Any]) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    sizes = {image["id"]: (image["height"], image["width"]) for image in gt["images"]}
    rows: list[tuple[int, float, float, float]] = []
    for annotation in gt["annotations"]:
        if annotation["iscrowd"] or annotation["area"] < 100:
            continue
        height, width = sizes[annotation["image_id"]]
        rle = coco_mask.frPyObjects(annotation["segmentation"], height, width)
        bitmap = coco_mask.decode(coco_mask.merge(rle) if isinstance(rle, list) else rle)
        for kind in KINDS:
            m = int(rng.choice(MAGNITUDES))
            perturbed = _perturbed(bitmap, kind, m, rng)
            rows.append((m, float(np.sqrt(bitmap.sum())), *_ious(_rle(bitmap), _rle(perturbed))))
    m_of, side, mask, boundary = (np.array(column) for column in zip(*rows, strict=True))
    measures = {"mask IoU": mask, "boundary IoU": boundary}
    truths = {
        f"off >= {FIX_FROM} px": m_of >= FIX_FROM,
        f"off >= {RELATIVE:.0%} of the object's size": m_of >= RELATIVE * side,
    }
    return {
        truth: {
            "pairs": len(rows),
            "fix": int(fix.sum()),
            "mask IoU at IOU_PERFECT, balanced accuracy": _balanced(mask, fix, IOU_PERFECT),
            **{
                name: {
                    "auc": _auc(score[~fix], score[fix]),
                    "best balanced accuracy, threshold": _best(score, fix),
                }
                for name, score in measures.items()
            },
        }
        for truth, fix in truths.items()
    }


def _outline_distance(a: Bitmap, b: Bitmap) -> float:
    """The largest distance from a pixel of either outline to the other outline (Hausdorff)."""
    edges = [x.astype(bool) & ~ndimage.binary_erosion(x) for x in (a, b)]
    if not edges[0].any() or not edges[1].any():
        return float("inf")
    to_b = ndimage.distance_transform_edt(~edges[1])[edges[0]].max()
    to_a = ndimage.distance_transform_edt(~edges[0])[edges[1]].max()
    return float(max(to_a, to_b))


def coco_pair(gt: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    sizes = {image["id"]: (image["height"], image["width"]) for image in gt["images"]}
    rows = []
    for result in results:
        height, width = sizes[result["image_id"]]
        anns = [
            a
            for a in gt["annotations"]
            if a["image_id"] == result["image_id"]
            and not a["iscrowd"]
            and a["category_id"] == result["category_id"]
        ]
        if not anns:
            continue
        rles = [coco_mask.merge(coco_mask.frPyObjects(a["segmentation"], height, width)) for a in anns]
        ious = coco_mask.iou([result["segmentation"]], rles, [0] * len(rles))[0]
        best = int(np.argmax(ious))
        if ious[best] < 0.3:
            continue
        mask, boundary = _ious(rles[best], result["segmentation"])
        distance = _outline_distance(coco_mask.decode(rles[best]), coco_mask.decode(result["segmentation"]))
        rows.append((mask, boundary, distance))
    table = np.array(rows, dtype=np.float64)
    mask_iou, boundary_iou, off = table[:, 0], table[:, 1], table[:, 2]
    accept_mask = mask_iou >= IOU_PERFECT
    return {
        "pairs": len(rows),
        "mask IoU >= 0.8": int(accept_mask.sum()),
        "outline off (px), median / 90th pct, where mask IoU >= 0.8": np.percentile(
            off[accept_mask], [50, 90]
        ).tolist(),
        "outline off (px), median / 90th pct, where mask IoU < 0.8": np.percentile(
            off[~accept_mask], [50, 90]
        ).tolist(),
        "corr(boundary IoU, -outline off)": float(np.corrcoef(boundary_iou, -off)[0, 1]),
        "corr(mask IoU, -outline off)": float(np.corrcoef(mask_iou, -off)[0, 1]),
        "auc outline off < FIX_FROM, mask": _auc(mask_iou[off < FIX_FROM], mask_iou[off >= FIX_FROM]),
        "auc outline off < FIX_FROM, boundary": _auc(
            boundary_iou[off < FIX_FROM], boundary_iou[off >= FIX_FROM]
        ),
        "pairs off < FIX_FROM": int((off < FIX_FROM).sum()),
    }


def main() -> int:
    gt = json.loads((PAIR / "instances_val2014_100.json").read_text())
    results = json.loads((PAIR / "instances_val2014_fakesegm100_results.json").read_text())
    print(json.dumps({"synthetic": synthetic(gt), "coco pair": coco_pair(gt, results)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
