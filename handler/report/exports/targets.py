"""The targets `prelabel-eval export --to` writes, by name: one line each.

Their modules load with this registry, not with the package: a run builds its finishers' files
(routing.json, class_map.json) from `handler.report.exports` without loading a writer it does
not use."""

from typing import Final

from handler.report.exports.coco_json import COCO
from handler.report.exports.cvat_xml import CVAT
from handler.report.exports.label_studio_json import LABEL_STUDIO
from handler.report.exports.pre_labels import ExportTarget
from handler.report.exports.yolo_obb_txt import YOLO_OBB
from handler.report.exports.yolo_seg_txt import YOLO_SEG
from handler.report.exports.yolo_txt import YOLO

EXPORT_TARGETS: Final[dict[str, ExportTarget]] = {
    target.name: target
    for target in (
        LABEL_STUDIO,
        CVAT,
        COCO,
        YOLO,
        YOLO_OBB,
        YOLO_SEG,
    )
}
