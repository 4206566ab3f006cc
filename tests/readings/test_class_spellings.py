"""Class names spelled another way: the public datasets' names of one class meet, no two classes do,
and the last class of a one-to-one map otherwise complete is read by elimination."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

import orjson
import pytest
from helpers import mixups
from helpers.paths import THIRD_PARTY
from msgspec.structs import replace

from handler.boxes import Parsed
from handler.execution import ExecutionOptions, read_and_plan
from handler.features import ANALYSES
from handler.inputs import parse_inputs
from handler.readings import classes
from handler.storage.local import LocalStore

COCO: Final = THIRD_PARTY / "coco_val2014_100"
COCO_GT: Final = COCO / "instances_val2014_100.json"
COCO_RESULTS: Final = COCO / "instances_val2014_fakebbox100_results.json"
VOC_GT: Final = THIRD_PARTY / "voc_padilla_100" / "gts" / "coco_format_v1" / "instances_default.json"
# Pascal VOC's names that COCO spells another way (the others are spelled alike).
VOC_TO_COCO: Final = {
    "aeroplane": "airplane",
    "motorbike": "motorcycle",
    "sofa": "couch",
    "tvmonitor": "tv",
    "pottedplant": "potted plant",
    "diningtable": "dining table",
}


def _names(path: Path) -> list[str]:
    return [category["name"] for category in orjson.loads(path.read_bytes())["categories"]]


def test_each_voc_class_spells_its_coco_class() -> None:
    coco = _names(COCO_GT)
    for name in _names(VOC_GT):
        assert classes.spelled_as(name, coco) == VOC_TO_COCO.get(name, name)


@pytest.mark.parametrize(
    "spelling",
    [str.upper, str.title, mixups.plural, lambda n: mixups.plural(n).replace(" ", "_").title()],
    ids=["upper", "title", "plural", "plural snake title"],
)
def test_each_coco_class_spelled_by_a_trainer_is_itself_and_no_other(spelling: Callable[[str], str]) -> None:
    coco = _names(COCO_GT)
    assert {name: classes.spelled_as(spelling(name), coco) for name in coco} == {name: name for name in coco}


def test_open_images_and_objects365_names_spell_coco_classes() -> None:
    coco = _names(COCO_GT)
    assert {name: classes.spelled_as(other, coco) for name, other in mixups.OPEN_IMAGES.items()} == {
        name: name for name in mixups.OPEN_IMAGES
    }
    assert classes.spelled_as("persons", coco) == "person"


def test_the_last_class_of_a_map_otherwise_complete_is_read_by_elimination(tmp_path: Path) -> None:
    """COCO results written with the trainer's own names, on the GT's categories cut to the classes
    the results use: with every pair but one known, the last is the last GT class left."""
    gt = orjson.loads(COCO_GT.read_bytes())
    results = orjson.loads(COCO_RESULTS.read_bytes())
    used = {result["category_id"] for result in results}
    gt["categories"] = [category for category in gt["categories"] if category["id"] in used]
    gt["annotations"] = [a for a in gt["annotations"] if a["category_id"] in used]
    (tmp_path / "gt.json").write_bytes(orjson.dumps(gt))
    names = {category["id"]: category["name"] for category in gt["categories"]}
    (tmp_path / "pred.json").write_bytes(orjson.dumps(mixups.spelled(mixups.unrelated)(gt, results)))
    raw = {"GT_DATASET": str(tmp_path / "gt.json"), "PRED_DATASET": str(tmp_path / "pred.json")}
    plan = read_and_plan(
        parse_inputs(raw), LocalStore(tmp_path / "store"), ExecutionOptions(workers=1), ANALYSES
    )
    assert plan.sides is not None and plan.sides.pred.parsed is not None
    parsed = plan.sides.pred.parsed
    truth = {mixups.unrelated(name): name for name in names.values()}
    gt_names, (last, second, *_) = list(names.values()), sorted(truth)
    almost = {key: name for key, name in truth.items() if key != last}
    assert classes.eliminated(_mapped(parsed, almost), gt_names, almost) == {last: truth[last]}
    two_left = {key: name for key, name in almost.items() if key != second}
    assert classes.eliminated(_mapped(parsed, two_left), gt_names, two_left) == {}


def _mapped(parsed: Parsed, class_map: dict[str, str]) -> Parsed:
    rows, names = classes.reading(class_map).transform(parsed)
    return replace(parsed, rows=rows, class_names=names)
