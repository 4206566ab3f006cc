"""Data-health warnings (contract §8): decided from the merged state only, most serious first.

A wrong-looking grade is never silent: each check below reads the merged `HealthFigures` and
`DatasetFigures`, so every executor raises the same warnings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Annotated, Final, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from handler.boxes import LayoutNote
from handler.datasets import names_from
from handler.datasets.builder import UNKNOWN_IMAGE
from handler.datasets.names import names_files_near, parse_names
from handler.datasets.read_options import option_flag, option_label
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.health import DUPLICATE_IOU
from handler.engine.outcomes import Outcome
from handler.engine.state import EvaluationState
from handler.engine.timecost import Shape
from handler.errors import DatasetError
from handler.features.reading.section import AppliedOption, OtherReading, other_reading
from handler.images.pictures import Pictures
from handler.inputs.node_inputs import decimal_point
from handler.readings.classes import FILE as CLASS_MAP_FILE
from handler.sections.context import RunFacts
from handler.sections.shown import Shown
from handler.sections.wording import ShapeWords, between, counted, signed

# Below this share of kept predictions in a GT class, the two sides do not name classes alike
# (a detector trained on the GT's classes puts most boxes in them, even when it is poor).
CLASS_OVERLAP_MIN: Final = 0.2
# From this share of skipped boxes the score rests on a visibly smaller dataset.
SKIPPED_SHARE_MIN: Final = 0.05
# Below this share of the predictions on an image of the GT, the results look made for other images.
PLACED_SHARE_MIN: Final = 0.25
# "Most" GT boxes carrying a confidence: GT drawn by people carries none.
GT_CONFIDENT_SHARE_MIN: Final = 0.5
# From this share of one side's assets missing on the other, the run is visibly partial.
UNMATCHED_SHARE_MIN: Final = 0.1
# Even one asset with two sizes puts its boxes in two coordinate frames.
SIZE_MISMATCH_MIN: Final = 1
# From this share of one side's boxes rotated, the other side's having none is an upright model
# (or an export that dropped the angle) scored against turned objects.
TURNED_SHARE_MIN: Final = 0.2
# A few duplicates happen in real GT; from this share of GT boxes they inflate the false negatives.
DUPLICATE_SHARE_MIN: Final = 0.01


class DataWarning(BaseModel):
    """Data that looks wrong in a way that changes the meaning of the score (or a note on what was
    left out); the keys beyond code, severity and message are the figures it was decided from."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, int | float | str]

    code: str = Field(json_schema_extra=lambda schema: schema.update(enum=list(WARNING_CODES)))
    severity: Literal["warning", "info"] = Field(
        description="warning: the score may mean something else than it seems; info: what was left out."
    )
    message: str = Field(min_length=1)

    @classmethod
    def of(cls, code: str, warned: Warned) -> DataWarning:
        if code not in WARNING_CODES:
            raise ValueError(f"unregistered warning code {code!r}")
        return cls.model_validate(
            {"code": code, "severity": warned.severity, "message": warned.message, **warned.figures}
        )

    @property
    def figures(self) -> dict[str, int | float | str]:
        return dict(self.__pydantic_extra__)


class Warned(msgspec.Struct, frozen=True):
    """What a check found: how serious, what it says, and the figures it was decided from."""

    severity: Literal["warning", "info"]
    message: str
    figures: dict[str, int | float | str]


def warned(severity: Literal["warning", "info"], message: str, **figures: int | float | str) -> Warned:
    """What a check found, its figures named by keyword."""
    return Warned(severity, message, figures)


class Check(msgspec.Struct, frozen=True):
    """One data check, registered by one line in `CHECKS`: its warning's code, the function that
    decides it from the run, and the reading family whose proposal says it better (its warning
    then stands in for this one)."""

    code: str
    decide: Callable[[RunFacts], Warned | None]
    said_by_reading: str | None = None


class Formats(msgspec.Struct, frozen=True):
    """The formats the two datasets were read in (the fix for numeric ids depends on them)."""

    gt: str
    pred: str


def _formats(facts: RunFacts) -> Formats:
    return Formats(facts.gt.format, facts.pred.format)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _looks_like_ids(names: Mapping[str, int]) -> bool:
    return bool(names) and all(name.isdigit() for name in names)


def _examples(names: Mapping[str, int]) -> str:
    commonest = sorted(names, key=lambda name: (-names[name], name))[:3]
    return ", ".join(commonest) + (", …" if len(names) > 3 else "")


def _ids_side(state: EvaluationState, formats: Formats) -> str:
    health = state.of(DATA_HEALTH)
    gt_ids, pred_ids = _looks_like_ids(health.class_gt), _looks_like_ids(health.class_kept)
    if gt_ids == pred_ids:
        return (
            f"the ground truth names classes like {_examples(health.class_gt)} and the predictions like "
            f"{_examples(health.class_kept)}: check that both use the same class names"
        )
    side, other, fmt = (
        ("predictions", "ground truth", formats.pred)
        if pred_ids
        else ("ground truth", "predictions", formats.gt)
    )
    ids = health.class_kept if pred_ids else health.class_gt
    names = health.class_gt if pred_ids else health.class_kept
    fix = f"{names_from(fmt)}, or {option_label('PRED_NAMES' if pred_ids else 'GT_NAMES')}"
    return (
        f"class names are numeric ids in the {side} ({_examples(ids)}) and words in the {other} "
        f"({_examples(names)}): give the {side} their class names ({fix}) so that ids become names"
    )


def _names_shared(state: EvaluationState) -> tuple[int, int] | None:
    """(kept predictions in a GT class, kept predictions) when few share the GT's class names."""
    health = state.of(DATA_HEALTH)
    kept = sum(health.class_kept.values())
    shared = sum(count for name, count in health.class_kept.items() if health.class_gt.get(name))
    if not kept or not health.class_gt or _share(shared, kept) >= CLASS_OVERLAP_MIN:
        return None
    return shared, kept


def _fitting(note: LayoutNote) -> str:
    if not note.fitting:
        return (
            "they fit none of the known layouts (`class [score] cx cy w h | x y w h | x1 y1 x2 y2 [score]`, "
            "normalised or pixels): check the export"
        )
    shown = " or ".join(f"`{name}` ({share:.0%})" for name, share in note.fitting)
    return f"they fit {shown}"


def _how_many(note: LayoutNote) -> str:
    return "None of the" if note.read_share == 0 else f"Only {note.read_share:.0%} of"


def _layout_fix(key: str, note: LayoutNote) -> str:
    if not note.fitting:
        return ""
    best = note.fitting[0][0].replace(" (normalised)", "").replace(" (pixels)", "")
    return f' Read them in that layout with {option_flag(key)} "{best}" ({key} in an inputs file).'


def layout_mismatch(facts: RunFacts) -> Warned | None:
    """Text label lines that make no box, or an odd one, in the column layout read."""
    state = facts.state
    health = state.of(DATA_HEALTH)
    found = [("ground-truth", "GT_LAYOUT", note) for note in health.gt_layout]
    found += [("prediction", "PRED_LAYOUT", note) for note in health.pred_layout]
    if not found:
        return None
    sides = [
        f"{_how_many(note)} {note.lines} sampled {what} lines make a box in the layout read, "
        f"`{note.read}`; {_fitting(note)}.{_layout_fix(key, note)}"
        for what, key, note in found
    ]
    message = " ".join(sides)
    first = found[0][2]
    return warned(
        "warning",
        message,
        layout_read=first.read,
        lines_fitting=round(first.read_share, 4),
        layout_fitting=first.fitting[0][0] if first.fitting else "",
    )


def class_names_disjoint(facts: RunFacts) -> Warned | None:
    state, formats = facts.state, _formats(facts)
    counts = _names_shared(state)
    if counts is None:
        return None
    shared, kept = counts
    message = (
        f"Only {shared} of {kept} kept predictions ({_share(shared, kept):.0%}) carry a class name that "
        f"the ground truth has, so matches count as class-confused; {_ids_side(state, formats)}."
    )
    return warned(
        "warning",
        message,
        kept_predictions=kept,
        in_gt_classes=shared,
    )


def _reasons(reasons: Mapping[str, int]) -> str:
    ordered = sorted(reasons, key=lambda reason: (-reasons[reason], reason))
    return ", ".join(f"`{reason}` ({reasons[reason]})" for reason in ordered)


def _side_skips(what: str, skipped: int, boxes: int, reasons: Mapping[str, int]) -> str:
    read = skipped + boxes
    return f"{skipped} of {read} {what} ({_share(skipped, read):.0%}): {_reasons(reasons)}"


def boxes_skipped(facts: RunFacts) -> Warned | None:
    state = facts.state
    figures, health = state.of(BOX_COUNTS), state.of(DATA_HEALTH)
    skipped = figures.gt_skipped + figures.pred_skipped
    read = skipped + health.gt_boxes + health.pred_boxes + figures.crowd_excluded
    if not skipped or _share(skipped, read) < SKIPPED_SHARE_MIN:
        return None
    sides = [
        _side_skips(what, count, boxes, reasons)
        for what, count, boxes, reasons in (
            (
                f"ground-truth {facts.words.many}",
                figures.gt_skipped,
                health.gt_boxes + figures.crowd_excluded,
                health.gt_skip_reasons,
            ),
            ("predictions", figures.pred_skipped, health.pred_boxes, health.pred_skip_reasons),
        )
        if count
    ]
    reasons = Counter(health.gt_skip_reasons) + Counter(health.pred_skip_reasons)
    commonest = max(sorted(reasons), key=lambda reason: reasons[reason])
    message = (
        f"{skipped} of {facts.words.count(read)} read ({_share(skipped, read):.0%}) were skipped, "
        "by reason: "
        f"{'; '.join(sides)}. The score covers the rest only."
    )
    return warned(
        "warning",
        message,
        skipped=skipped,
        boxes=read,
        reason=commonest,
    )


def predictions_elsewhere(facts: RunFacts) -> Warned | None:
    """Few predictions name an image of the GT: a results file made for another dataset."""
    state = facts.state
    figures, health = state.of(BOX_COUNTS), state.of(DATA_HEALTH)
    read = health.pred_boxes + figures.pred_skipped
    elsewhere = health.pred_skip_reasons.get(UNKNOWN_IMAGE, 0) + health.pred_boxes - figures.predictions
    placed = read - elsewhere
    if not read or _share(placed, read) >= PLACED_SHARE_MIN:
        return None
    gt_images = figures.images + figures.gt_only_images
    message = (
        f"{placed} of {read} predictions refer to one of the {gt_images} ground-truth images: is this "
        f"results file for another dataset? The score counts every ground-truth {facts.words.one} as missed."
        if placed == 0
        else f"{placed} of {read} predictions refer to one of the {gt_images} ground-truth images: is this "
        "results file for another dataset?"
    )
    return warned(
        "warning",
        message,
        predictions_read=read,
        on_gt_images=placed,
        gt_images=gt_images,
    )


def ground_truth_has_confidences(facts: RunFacts) -> Warned | None:
    state = facts.state
    health = state.of(DATA_HEALTH)
    share = _share(health.gt_confident, health.gt_boxes)
    if share < GT_CONFIDENT_SHARE_MIN or health.pred_confident or not health.pred_boxes:
        return None
    message = (
        f"{health.gt_confident} of {health.gt_boxes} ground-truth {facts.words.many} ({share:.0%}) carry a "
        "confidence and "
        "the predictions carry none: the two datasets look swapped (GT_DATASET is the trusted one)."
    )
    return warned(
        "warning",
        message,
        gt_with_confidence=health.gt_confident,
        gt_boxes=health.gt_boxes,
    )


def rotated_on_one_side(facts: RunFacts) -> Warned | None:
    health = facts.state.of(DATA_HEALTH)
    gt = ("ground-truth boxes", health.gt_turned, health.gt_boxes)
    pred = ("predictions", health.pred_turned, health.pred_boxes)
    for (name, turned, boxes), (other, other_turned, other_boxes) in ((gt, pred), (pred, gt)):
        if _share(turned, boxes) >= TURNED_SHARE_MIN and not other_turned and other_boxes:
            message = (
                f"{turned} of {boxes} {name} ({_share(turned, boxes):.0%}) are rotated and none of the "
                f"{other_boxes} {other} is: upright boxes (a detection model's, or an export that dropped "
                "the angle) overlap turned objects poorly, so the score says as much about the box shape "
                "as about the model; compare an oriented-box model's output, or check that the export "
                "keeps the rotation."
            )
            return warned("warning", message, turned=turned, boxes=boxes)
    return None


def masks_on_one_side(facts: RunFacts) -> Warned | None:
    """Instance masks on one side only: the boxes are scored, and the run says which side lacks them."""
    if facts.gt.masks == facts.pred.masks:
        return None
    has, lacks = ("ground truth", "predictions") if facts.gt.masks else ("predictions", "ground truth")
    carry, do = ("carries", "do") if facts.gt.masks else ("carry", "does")
    message = (
        f"The {has} {carry} instance masks but the {lacks} {do} not: scored on boxes. Give the {lacks} "
        "as masks (polygons or RLE) to score the masks."
    )
    return warned("info", message, masks=has)


def scored_on_masks(facts: RunFacts) -> Warned | None:
    if not (facts.gt.masks and facts.pred.masks):
        return None
    message = (
        "Scored on masks: a pair's IoU is that of its instance masks (the pixels in both over those in "
        "either, as pycocotools' mask IoU); SCORE_ON boxes (--score-on boxes) scores their boxes."
    )
    return warned("info", message, scored_on="masks")


def costs_of_another_shape(facts: RunFacts) -> Warned | None:
    """Seconds fitted from a log of one shape's work pricing a run scored on the other."""
    fit = facts.costs.fit
    scored: Shape = "masks" if facts.gt.masks and facts.pred.masks else "boxes"
    if fit is None or fit.shape == scored:
        return None
    message = (
        f"The seconds per action were fitted from labelers drawing {fit.shape} ({fit.source}), but this "
        f"run scores {scored}: the time saved prices the one work at the other's seconds. Calibrate "
        f"from a log of {scored} work (or `calibrate --shape {scored}`), or score the other shape."
    )
    return warned("warning", message, fitted_on=fit.shape, scored_on=scored)


def assets_unmatched(facts: RunFacts) -> Warned | None:
    state = facts.state
    figures = state.of(BOX_COUNTS)
    gt_share = _share(figures.gt_only_images, figures.images + figures.gt_only_images)
    pred_share = _share(figures.pred_only_images, figures.images + figures.pred_only_images)
    if max(gt_share, pred_share) < UNMATCHED_SHARE_MIN:
        return None
    sides = []
    if figures.gt_only_images:
        sides.append(
            f"{figures.gt_only_images} of {figures.images + figures.gt_only_images} ground-truth images "
            f"({gt_share:.0%}) have no entry in the predictions (a partial prediction run shrinks the set)"
        )
    if figures.pred_only_images:
        sides.append(
            f"{figures.pred_only_images} of {figures.images + figures.pred_only_images} prediction images "
            f"({pred_share:.0%}) are not in the ground truth"
        )
    message = f"{'; '.join(sides)}: only the {figures.images} shared images were scored."
    return warned(
        "warning",
        message,
        gt_only_images=figures.gt_only_images,
        pred_only_images=figures.pred_only_images,
        shared_images=figures.images,
    )


def image_size_mismatch(facts: RunFacts) -> Warned | None:
    state = facts.state
    mismatched, images = state.of(DATA_HEALTH).size_mismatched, state.of(BOX_COUNTS).images
    if mismatched < SIZE_MISMATCH_MIN:
        return None
    message = (
        f"{mismatched} of {images} shared images have a different width or height in the two datasets: "
        f"their {facts.words.many} may be in different coordinate frames (resized images?)."
    )
    return warned(
        "warning",
        message,
        mismatched_images=mismatched,
        images=images,
    )


def duplicate_ground_truth(facts: RunFacts) -> Warned | None:
    state = facts.state
    pairs, gt = state.of(DATA_HEALTH).duplicate_gt, state.of(BOX_COUNTS).gt_objects
    if not pairs or _share(pairs, gt) < DUPLICATE_SHARE_MIN:
        return None
    words = facts.words
    # On a mask run the duplicates are found on the masks (`duplicate_pairs`: the masks' IoU).
    message = (
        f"{counted(pairs, 'pair', 'pairs')} of same-class ground-truth {words.many} on one image overlap "
        f"with IoU ≥ {DUPLICATE_IOU:g} "
        f"({gt} GT {words.many}): one object drawn twice leaves a false negative that no prediction can fix."
    )
    return warned("warning", message, pairs=pairs, gt_boxes=gt)


def images_not_drawn(facts: RunFacts) -> Warned | None:
    """Images were given (IMAGES, --images) and none can be drawn here (Pillow is missing)."""
    pictures = facts.finished(Pictures)
    if not facts.inputs.images or not pictures.note:
        return None
    return warned("warning", f"The images given are not drawn: {pictures.note}.", drawn=0)


def decimal_comma(facts: RunFacts) -> Warned | None:
    read = facts.inputs.decimal_commas
    if not read:
        return None
    said = ", ".join(f"{key} {text!r} as {decimal_point(text)}" for key, text in read)
    return warned("info", f"Read {said}: a decimal comma read as a decimal point.", inputs=len(read))


def confidence_threshold_replaced(facts: RunFacts) -> Warned | None:
    inputs = facts.inputs
    if not inputs.confidence.replaced:
        return None
    message = (
        f"CONFIDENCE_THRESHOLD {inputs.confidence.given!r} is not a number, so 0 was used: "
        "every prediction was kept."
    )
    return warned(
        "info",
        message,
    )


def _all_match(count: int, words: ShapeWords) -> str:
    return f"the one {words.one} matches" if count == 1 else f"all {words.count(count)} match"


def predictions_equal_ground_truth(facts: RunFacts) -> Warned | None:
    """Every box matched with IoU 1 and the same class, none left over: the same dataset twice?"""
    state = facts.state
    tally = state.tally
    if tally.counts[Outcome.CORRECT] == 0 or tally.counts.sum() != tally.counts[Outcome.CORRECT]:
        return None
    if tally.mean_iou != 1.0:
        return None
    matched = _all_match(int(tally.counts[Outcome.CORRECT]), facts.words)
    message = (
        f"The predictions equal the ground truth: {matched} "
        "with IoU 1 and the same class. Was the same dataset given twice?"
    )
    return warned("info", message, boxes=int(tally.counts[Outcome.CORRECT]))


def image_ids_joined(facts: RunFacts) -> Warned | None:
    """A side's image ids named no image by id but did one to one by another key: read joined so."""
    for side, names in (("ground truth", facts.gt), ("predictions", facts.pred)):
        if names.id_join is not None:
            message = (
                f"The {side}' image ids are not the ground truth's ids: they were joined to the images by "
                f"{names.id_join}, one to one, covering every row."
            )
            return warned("info", message, side=side, join=names.id_join)
    return None


def crowd_excluded(facts: RunFacts) -> Warned | None:
    state = facts.state
    crowd = state.of(BOX_COUNTS).crowd_excluded
    if not crowd:
        return None
    regions = counted(crowd, "COCO crowd region (iscrowd=1) was", "COCO crowd regions (iscrowd=1) were")
    message = f"{regions} left out of the ground truth."
    return warned("info", message, crowd_regions=crowd)


def _applied(option: AppliedOption) -> str:
    if option.value == CLASS_MAP_FILE:
        return (
            f"review the report's {CLASS_MAP_FILE} (`prelabel-eval show REPORT_ID --class-map > "
            f"{CLASS_MAP_FILE}`) and pass it back with {option.flag} {CLASS_MAP_FILE} ({option.option} in an "
            f"inputs file, {option.option.lower()}= in load_records)"
        )
    return (
        f'pass {option.flag} "{option.value}" ({option.option} in an inputs file, '
        f"{option.option.lower()}= in load_records)"
    )


def _applies(found: OtherReading, names_file: str | None) -> str:
    if found.only:
        return (
            f"no read option applies it to part of the files: the {len(found.only)} it names (all of them "
            "in the findings' other_reading.only) were written by another step than the rest; write them "
            "as the rest are, and run again"
        )
    steps = " and ".join(_applied(option) for option in found.options)
    if names_file is None:
        return f"to apply it, {steps}"
    key = f"{found.side.upper()}_NAMES"
    side = "ground truth" if found.side == "gt" else "predictions"
    return (
        f"one option applies it, `{option_flag(key)} {names_file}` ({key}: the names file near the "
        f"{side} names their ids so); or {steps}"
    )


def names_file_saying(found: OtherReading, source: str) -> str | None:
    """A names file near the side's files whose id → name lines give exactly the class map found:
    one option does what the map's review and pass-back would."""
    if found.family != "classes" or found.side not in ("gt", "pred") or not found.class_map:
        return None
    for path in names_files_near(source):
        try:
            with open(path, encoding="utf-8") as file:
                names = parse_names(path, file.read())
        except (OSError, UnicodeDecodeError, DatasetError):
            continue
        pairs = found.class_map.items()
        if all(written.isdigit() and names.get(int(written)) == meant for written, meant in pairs):
            return path
    return None


def reading_warning(found: OtherReading, source: str = "") -> DataWarning:
    """The proposed reading as a warning; `source` is where the read-again side's files are."""
    applies = _applies(found, names_file_saying(found, source))
    message = (
        f"Did you mean {found.says}? Read that way the predictions score {found.score:.2f} "
        f"({found.grade}) instead of {found.score_as_read:.2f} ({found.grade_as_read}), re-scored on all "
        f"{counted(found.images, 'shared image')} (gain {signed(found.score - found.score_as_read)}, "
        f"{between(found.gain_low, found.gain_high, signed, found.level)}): {applies}. "
        "Suspected ground-truth errors are not listed while this reading explains the misses."
    )
    return DataWarning.of(
        "other_reading",
        warned(
            "warning",
            message,
            reading=found.family,
            option=found.option,
            value=found.value,
            score=round(found.score, 4),
            grade=found.grade,
        ),
    )


# Most serious first: the order of the banners and of the stderr lines. A symptom a proposed
# reading says better gives way to it: the class names to a class reading, the layout to a box one.
CHECKS: Final[tuple[Check, ...]] = (
    Check("predictions_elsewhere", predictions_elsewhere),
    Check("layout_mismatch", layout_mismatch, said_by_reading="box"),
    Check("class_names_disjoint", class_names_disjoint, said_by_reading="classes"),
    Check("ground_truth_has_confidences", ground_truth_has_confidences),
    Check("rotated_on_one_side", rotated_on_one_side),
    Check("masks_on_one_side", masks_on_one_side),
    Check("costs_of_another_shape", costs_of_another_shape),
    Check("boxes_skipped", boxes_skipped),
    Check("assets_unmatched", assets_unmatched),
    Check("image_size_mismatch", image_size_mismatch),
    Check("duplicate_ground_truth", duplicate_ground_truth),
    Check("images_not_drawn", images_not_drawn),
    Check("decimal_comma", decimal_comma),
    Check("confidence_threshold_replaced", confidence_threshold_replaced),
    Check("predictions_equal_ground_truth", predictions_equal_ground_truth),
    Check("image_ids_joined", image_ids_joined),
    Check("crowd_excluded", crowd_excluded),
    Check("scored_on_masks", scored_on_masks),
)

# Every code a warning may carry: the reading's own, then the checks'.
WARNING_CODES: Final[tuple[str, ...]] = ("other_reading", *(check.code for check in CHECKS))


def data_warnings(facts: RunFacts) -> tuple[DataWarning, ...]:
    """Every check's warning, in CHECKS order (most serious first); a proposed reading's first, in
    place of the symptoms it says better."""
    found = [DataWarning.of(check.code, warned) for check in CHECKS if (warned := check.decide(facts))]
    reading = other_reading(facts)
    if reading is None:
        return tuple(found)
    families = set(reading.family.split("+"))
    said = {check.code for check in CHECKS if check.said_by_reading in families}
    source = facts.gt.source if reading.side == "gt" else facts.pred.source
    return (reading_warning(reading, source), *(warning for warning in found if warning.code not in said))


# The warnings are a section like the others (a typed field of `Findings`, built from the `RunFacts`);
# the page shows them as banners under the verdict, so they bring no fragment.
WarningsSection = Annotated[
    tuple[DataWarning, ...],
    Field(description="Data-health warnings, most serious first; shown under the verdict and on stderr."),
    Shown(data_warnings, "warnings", always=True),
]
