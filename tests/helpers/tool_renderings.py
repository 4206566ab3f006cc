"""A COCO pair rendered by the tools' own converters, as their users make such files:

- label-studio-sdk's COCO import (`convert_coco_to_ls`: each object its bbox as a rectangle, then
  a polygon per part of its segmentation) for the ground truth, and its brush encoder
  (`mask2rle`) for masks given as RLE, which that import cannot take;
- datumaro's `coco_instances` import, for its exporters (CVAT, COCO);
- ultralytics' `convert_coco(use_segments=True)` YOLO-seg lines: `ultralytics_merge` follows its
  `merge_multi_segment` (ultralytics/data/converter.py), the one part that is not plain
  arithmetic, since ultralytics itself (it pulls in torch) is no test dependency.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

import numpy as np
from pycocotools import mask as coco_mask

# The labeling config's controls for brush predictions beside the converter's own controls.
BRUSH_CONTROL: Final = "brush"


def without_crowds(gt: dict[str, Any]) -> dict[str, Any]:
    """The ground truth less its crowd regions: label-studio-sdk's COCO import stops on their RLE
    (it reads every segmentation as polygons), so its users leave them out first."""
    return {**gt, "annotations": [a for a in gt["annotations"] if not a.get("iscrowd")]}


def results_as_instances(gt: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """A results list as a COCO instances file of the same images (what datumaro and
    label-studio-sdk import): ids, `iscrowd` 0, a bbox (the mask's, where a result has none)."""
    annotations = [
        {
            **r,
            "id": number,
            "iscrowd": 0,
            "bbox": r.get("bbox") or [float(v) for v in coco_mask.toBbox(r["segmentation"])],
            "area": float(coco_mask.area(r["segmentation"])),
        }
        for number, r in enumerate(results, start=1)
    ]
    return {**gt, "annotations": annotations}


def label_studio_converted(
    folder: Path, gt: dict[str, Any], results: list[dict[str, Any]]
) -> tuple[Any, str]:
    """Tasks of the pair: the ground truth (crowds left out) by label-studio-sdk's COCO import, the
    mask results as brush predictions by its brush encoder (model version `segm`); and the
    labeling config: the import's own, with a brush control added."""
    from label_studio_sdk.converter.brush import mask2rle
    from label_studio_sdk.converter.imports.coco import convert_coco_to_ls

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gt.json").write_text(json.dumps(without_crowds(gt)))
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its how-to
        convert_coco_to_ls(
            str(folder / "gt.json"), str(folder / "tasks.json"), image_root_url="/data/upload/1/"
        )
    tasks = json.loads((folder / "tasks.json").read_text())
    config = (folder / "tasks.label_config.xml").read_text()
    names = {c["id"]: c["name"] for c in gt["categories"]}
    images = {i["id"]: i for i in gt["images"]}
    brushes: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        image = images[result["image_id"]]
        brushes[result["image_id"]].append(
            {
                "from_name": BRUSH_CONTROL,
                "to_name": "image",
                "type": "brushlabels",
                "original_width": image["width"],
                "original_height": image["height"],
                "image_rotation": 0,
                "score": result["score"],
                "value": {
                    "format": "rle",
                    "rle": mask2rle(coco_mask.decode(result["segmentation"]) * 255),
                    "brushlabels": [names[result["category_id"]]],
                },
            }
        )
    for task, image_id in zip(tasks, sorted(images), strict=True):  # the import's tasks: by image id
        task["predictions"] = [{"model_version": "segm", "result": brushes[image_id]}]
    labels = "".join(f'<Label value="{name}"/>' for name in sorted(set(names.values())))
    brush = f'<BrushLabels name="{BRUSH_CONTROL}" toName="image">{labels}</BrushLabels></View>'
    return tasks, config.replace("</View>", brush, 1)


def datumaro_coco(folder: Path, instances: dict[str, Any]) -> Any:
    """A COCO instances document imported by datumaro's `coco_instances` importer."""
    import datumaro as dm

    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    (folder / "images" / "default").mkdir(parents=True, exist_ok=True)  # the importer wants it
    (folder / "annotations" / "instances_default.json").write_text(json.dumps(instances))
    return dm.Dataset.import_from(str(folder), "coco_instances")


def ultralytics_yolo_seg(folder: Path, instances: dict[str, Any]) -> Path:
    """A YOLO-seg labels folder of a COCO instances document as ultralytics' `convert_coco(
    use_segments=True)` writes it: crowds and boxes without area left out, a repeated box of a
    class written once, class ids in category order (its COCO-80 mapping), several parts merged
    by `ultralytics_merge`, fractions of the image written with `%g`; with a classes.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    categories = sorted(instances["categories"], key=lambda c: c["id"])
    index = {c["id"]: number for number, c in enumerate(categories)}
    (folder / "classes.txt").write_text("".join(f"{c['name']}\n" for c in categories))
    by_image: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for annotation in instances["annotations"]:
        by_image[annotation["image_id"]].append(annotation)
    for image in instances["images"]:
        lines, boxes = [], []
        for annotation in by_image[image["id"]]:
            x, y, w, h = annotation["bbox"]
            box = [index[annotation["category_id"]], x + w / 2, y + h / 2, w, h]
            if annotation.get("iscrowd") or w <= 0 or h <= 0 or box in boxes:
                continue
            boxes.append(box)
            points = ultralytics_merge(annotation["segmentation"]) / [image["width"], image["height"]]
            line = (box[0], *points.reshape(-1).tolist())
            lines.append(("%g " * len(line)).rstrip() % line)
        (folder / f"{Path(image['file_name']).stem}.txt").write_text("".join(f"{line}\n" for line in lines))
    return folder


def ultralytics_merge(parts: list[list[float]]) -> Any:
    """An object's polygons as one (M, 2) outline in pixels, as ultralytics' `merge_multi_segment`
    makes it: neighbouring parts linked at their closest points (the first closest pair in
    row-major order), walked forward through each part's loop (rolled to its link, closed), then
    back along the middle parts. A middle part whose outgoing link comes before its incoming one
    is reversed, but its links are still counted in the unreversed order, as ultralytics does."""
    segments = [np.array(part, dtype=np.float64).reshape(-1, 2) for part in parts]
    if len(segments) == 1:
        return segments[0]
    links: list[list[int]] = [[] for _ in segments]
    for i in range(1, len(segments)):
        distances = ((segments[i - 1][:, None, :] - segments[i][None, :, :]) ** 2).sum(-1)
        before, after = np.unravel_index(np.argmin(distances), distances.shape)
        links[i - 1].append(int(before))
        links[i].append(int(after))
    last = len(segments) - 1
    walked: list[Any] = []
    for i, link in enumerate(links):
        entry, leave = (link[1], link[0]) if len(link) == 2 and link[0] > link[1] else (link[0], link[-1])
        if len(link) == 2 and link[0] > link[1]:
            segments[i] = segments[i][::-1]
        rolled = np.roll(segments[i], -entry, axis=0)
        segments[i] = np.concatenate([rolled, rolled[:1]])
        walked.append(segments[i] if i in (0, last) else segments[i][: leave - entry + 1])
    for i in range(last - 1, 0, -1):
        walked.append(segments[i][abs(links[i][1] - links[i][0]) :])
    return np.concatenate(walked)


def yolo_seg_as_instances(folder: Path, gt: dict[str, Any]) -> dict[str, Any]:
    """The masks a YOLO-seg labels folder holds, as a COCO instances document of `gt`'s images
    (each line's polygon in pixels): the oracle's view of what a converter wrote."""
    names = (folder / "classes.txt").read_text().split("\n")
    ids = {c["name"]: c["id"] for c in gt["categories"]}
    annotations: list[dict[str, Any]] = []
    for image in gt["images"]:
        for line in (folder / f"{Path(image['file_name']).stem}.txt").read_text().splitlines():
            values = line.split()
            points = np.array(values[1:], dtype=np.float64).reshape(-1, 2) * [image["width"], image["height"]]
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image["id"],
                    "category_id": ids[names[int(values[0])]],
                    "iscrowd": 0,
                    "segmentation": [points.reshape(-1).tolist()],
                }
            )
    return {**gt, "annotations": annotations}
