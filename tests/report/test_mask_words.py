"""A run scored on masks speaks of masks: its page, its CLI summary and its findings' texts name
masks (or objects) where a box run names boxes, and a mask's shifted pre-label has its outline
fixed, not nudged (`ShapeWords`, handler/sections/wording.py). The box run's words stay."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from helpers.coco_masks import coco_pair
from helpers.node_run import run_cli
from helpers.reports import strings_in

from handler.report.page.html import action_labels
from handler.sections.wording import SHAPE_WORDS

BOX_WORDS = re.compile(r"\b(box|boxes|nudge|nudged)\b", re.IGNORECASE)
# Where "box" is right on a mask run: the mark drawn on a sketch is a rectangle around the object,
# the read-as line names the file's box convention (a mask file carries boxes too) or says that a
# file writing no box is given its masks' extents as boxes, the info line
# names the option that scores the boxes, a cited measure is a box's, a mask's size is its box's.
ALLOWED = (
    "the box in question",
    "boxes as x y w h",
    "each box its shape's extent (the format's: it writes no box for them)",
    "SCORE_ON boxes (--score-on boxes) scores their boxes",
    "as verifying a box",
    "ground-truth mask's box (its extent)",
)


def _page_texts(page: str) -> list[str]:
    """What a reader sees or hovers: the text between tags, and the titles and labels of figures."""
    page = re.sub(r"<style.*?</style>", "", page, flags=re.DOTALL)
    hovered = re.findall(r'(?:aria-label|title)="([^"]*)"', page)
    return [html.unescape(text) for text in [*re.split(r"<[^>]+>", page), *hovered] if text.strip()]


def _box_words(texts: list[str]) -> list[str]:
    """The texts that still name a box (or a nudge) once the allowed phrases are taken out."""
    said = []
    for text in texts:
        rest = text
        for phrase in ALLOWED:
            rest = rest.replace(phrase, "")
        if BOX_WORDS.search(rest):
            said.append(text)
    return said


def _run(store: Path, gt: Path, pred: Path) -> tuple[str, list[str]]:
    """The CLI's summary and every text of the stored report (page, findings, routing.json)."""
    run = run_cli(str(gt), str(pred), "--store", str(store))
    assert run.returncode == 0, run.stderr[-3000:]
    folder = next((store / "reports").iterdir())
    texts = _page_texts((folder / "report.html").read_text())
    for part in ("findings.json", "routing.json"):
        texts += list(strings_in(json.loads((folder / part).read_text())))
    summary = run.stdout.decode() + run.stderr
    return summary, texts + summary.splitlines()


def test_a_mask_run_s_texts_name_masks_not_boxes(tmp_path: Path) -> None:
    gt, masks, _ = coco_pair()
    summary, texts = _run(tmp_path, gt, masks)
    assert _box_words(texts) == []
    said = "\n".join(texts)
    for words in (
        "a prediction matches a ground-truth mask from IoU 0.3",
        "ground-truth mask nothing matched",
        "166 fix the outline",
        "Fix the outline (shifted)",
        "prediction: fix the outline",
        "classes with a mask",
        "every other mask under its ground-truth class",
        "Each class with at least 30 masks",
        "a false positive and a missed mask",
        "the time it takes to draw every mask from scratch",
        "outcomes by mask size",
        "Every mask and its outcome",
    ):
        assert words in said, words
    assert "every mask" in summary
    assert [phrase for phrase in ALLOWED if phrase not in said] == []  # each allowance still needed


def test_a_box_run_s_texts_still_name_boxes(tmp_path: Path) -> None:
    gt, _, boxes = coco_pair()
    _, texts = _run(tmp_path, gt, boxes)
    said = "\n".join(texts)
    for words in (
        "a prediction matches a ground-truth box from IoU 0.3",
        "ground-truth box nothing matched",
        "Nudge (shifted)",
        "prediction: nudge",
        "Each class with at least 30 boxes",
        "outcomes by box size",
        "Every box and its outcome",
    ):
        assert words in said, words
    # Only the info line on the GT's masks names masks here: no mask's word stood in for a box's.
    assert "fix the outline" not in said and "every mask" not in said and "a missed mask" not in said


@pytest.mark.parametrize(
    ("shape", "shifted"), [("boxes", "Nudge (shifted)"), ("masks", "Fix the outline (shifted)")]
)
def test_each_action_s_title_is_said_for_the_shape(shape: str, shifted: str) -> None:
    labels = action_labels(SHAPE_WORDS[shape])
    assert labels["nudge"] == shifted
    assert labels["accept"] == "Accept (correct)" and labels["draw"] == "Draw (false negative)"


def test_compare_on_masks_speaks_of_masks(tmp_path: Path) -> None:
    """Two mask prediction sets: compare's summary and page say mask by mask, GT masks."""
    gt, masks, _ = coco_pair()
    half = tmp_path / "half.json"
    half.write_text(json.dumps(json.loads(masks.read_text())[::2]))
    page = tmp_path / "compare.html"
    run = run_cli("compare", str(gt), str(masks), str(half), "--html", str(page), "--store", str(tmp_path))
    assert run.returncode == 0, run.stderr[-3000:]
    summary = run.stdout.decode()
    assert "mask by mask: B worse on" in summary and "GT masks; B turned" in summary
    assert _box_words([*summary.splitlines(), *_page_texts(page.read_text())]) == []
