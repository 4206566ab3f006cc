"""The comparison of two prediction sets on the same GT: its typed model, JSON and summary lines.

`Comparison` serialises to exactly the `--json` document; `context` (what the page and the
summary also say: the images, the resamples, both scores) is excluded from the JSON.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, cast

import msgspec
import numpy as np
import orjson
from msgspec.structs import asdict
from pydantic import AliasChoices, Field, PlainSerializer

from handler.boxes import IntArray
from handler.engine.analyses.image_classes import ImageClassRows
from handler.engine.bootstrap import SEED
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Thresholds
from handler.engine.outcomes import Outcome
from handler.engine.paired import ClassRows, Difference, PairedBootstrap, class_intervals
from handler.engine.plugin import ClassCounts
from handler.engine.sweep import Sweep
from handler.engine.timecost import TimeCosts
from handler.engine.transitions import GT_OUTCOMES, Transitions
from handler.sections.fields import Count, Counts, Grade, Score, Section, Threshold, outcome_counts
from handler.sections.wording import (
    ShapeWords,
    between,
    change,
    counted,
    duration,
    saving,
    score_text,
    shape_words,
)

Better = Literal["A", "B", "neither"]
# Every score figure of the JSON to 4 places, the ends of an interval as its middle (exact in Python).
FIGURE_DECIMALS: Final = 4
FOUR_PLACES: Final = PlainSerializer(lambda value: round(value, FIGURE_DECIMALS), return_type=float)
Figure = Annotated[float, FOUR_PLACES]
ScoreFigure = Annotated[Score, FOUR_PLACES]
# The largest moves the transitions name, and the images where B lost most that they list.
TOP_CHANGES: Final = 4
TOP_IMAGES: Final = 10
# A GT box's outcome as a sentence names it ("B turned 40 missed boxes into correct ones").
OUTCOME_WORDS: Final = {
    Outcome.CORRECT: "correct",
    Outcome.SHIFTED: "shifted",
    Outcome.CLASS_CONFUSED: "class-confused",
    Outcome.FALSE_NEGATIVE: "missed",
}


class ScoreDifference(Section):
    score: Figure = Field(description="Assistance score of B minus that of A, on the paired images.")
    low: Figure
    high: Figure


class TimeDifference(Section):
    seconds: float = Field(description="Labeler seconds B saves minus those A saves, on the paired images.")
    low: float
    high: float


class ClassDifference(Section):
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    score_a: ScoreFigure
    score_b: ScoreFigure
    difference: Figure
    boxes_a: Count = Field(description="The class's boxes in A's run (GT objects plus A's false positives).")
    boxes_b: Count
    low: Figure = Field(
        description="Low end of the interval of B - A of the class's score on the paired images."
    )
    high: Figure = Field(
        description="High end of that interval: the same paired bootstrap resamples as the whole run's."
    )


class Side(Section):
    """One prediction set's figures on the paired images."""

    dataset: str
    assistance_score: Score
    grade: Grade
    saved_seconds: float
    counts: Counts
    best_threshold: Threshold = Field(
        description="The confidence threshold of the run's own sweep that saves the most labeler time."
    )
    best_score: Score


class ComparedThresholds(Section):
    """Both runs' `Thresholds`, as a model (pydantic takes no msgspec Struct as a field)."""

    iou_min: float
    iou_perfect: float
    confidence_threshold: float


class ComparisonContext(Section):
    gt: str
    a: Side
    b: Side
    thresholds: ComparedThresholds
    same_predictions: bool = Field(
        description="A and B give the same outcomes on every image at every threshold."
    )
    images: int = Field(ge=1, description="Images scored in both runs, paired by asset id.")
    resamples: int = Field(ge=1000)
    level: float = Field(gt=0, lt=1)
    seed: int


class TransitionImage(Section):
    asset_id: str
    seconds_added: float = Field(
        description="B's correction seconds minus A's on this image (every outcome, false positives too)."
    )
    worse: Count = Field(description="The image's GT boxes whose outcome under B costs more than under A.")
    better: Count


class BoxTransitions(Section):
    """Each GT box's outcome under A beside its outcome under B: what B changed, box by box."""

    outcomes: tuple[str, ...] = Field(
        description="The rows (A) and columns (B) of `counts`: a GT box's outcomes."
    )
    counts: tuple[tuple[int, ...], ...] = Field(
        description="GT boxes scored in both runs by their outcome under A (row) and under B (column)."
    )
    seconds: tuple[float, ...] = Field(
        description="Each outcome's labeler seconds at the comparison's costs: what worse and better compare."
    )
    boxes: Count
    worse: Count = Field(description="GT boxes whose outcome under B costs the labeler more than under A.")
    better: Count = Field(description="GT boxes whose outcome under B costs less than under A.")
    changes: tuple[str, ...] = Field(
        max_length=TOP_CHANGES, description="The largest moves between two outcomes, most boxes first."
    )
    images_b_lost_most: tuple[TransitionImage, ...] = Field(
        max_length=TOP_IMAGES,
        description="The images where B adds the most correction seconds over A, most first.",
    )


class Comparison(Section):
    """Which prediction set leaves less correction work: B - A with paired bootstrap intervals."""

    better: Better = Field(description="The set whose score is higher with the interval excluding 0.")
    difference: ScoreDifference
    time_saved_difference: TimeDifference
    per_class: tuple[ClassDifference, ...] = Field(
        description="Every class with a box in either run, most boxes first; scores on each run's images."
    )
    transitions: BoxTransitions
    scored_on: Literal["boxes", "masks"] = Field(
        description="What both runs measured a pair by: `masks` (mask IoU) when both prediction sets "
        "and the GT carry a mask for every object, else `boxes`; the transitions follow it."
    )
    scored_on_note: str | None = Field(
        description="Why both were scored on boxes where one alone carried masks; null otherwise."
    )
    context: ComparisonContext = Field(exclude=True)

    @property
    def words(self) -> ShapeWords:
        """What both runs scored, as said: GT boxes, or GT masks."""
        return shape_words(self.scored_on)

    def document(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> bytes:
        return orjson.dumps(self.document(), option=orjson.OPT_INDENT_2)


def _side(dataset: str, counts: IntArray, sweep: Sweep, costs: TimeCosts, used: float) -> Side:
    whole = OutcomeCounts(counts.sum(axis=0))
    best = sweep.choice(used, costs).best
    return Side(
        dataset=dataset,
        assistance_score=whole.score,
        grade=cast(Grade, whole.grade),
        saved_seconds=float(whole.seconds_saved(costs)),
        counts=outcome_counts(whole.rows),
        best_threshold=best.threshold,
        best_score=best.tally.assistance_score,
    )


def _aligned(table: ClassCounts, names: list[str]) -> IntArray:
    """`table.counts` on the rows of `names` (zeros for a class the run never saw)."""
    rows = {name: i for i, name in enumerate(table.names)}
    aligned = np.zeros((len(names), table.counts.shape[1]), dtype=np.int64)
    present = [i for i, name in enumerate(names) if name in rows]
    aligned[present] = table.counts[[rows[names[i]] for i in present]]
    return aligned


def _class_rows(run: RunFigures, names: list[str]) -> ClassRows:
    """The run's (image, class) rows on the paired images, classes as rows of `names` (others dropped)."""
    found = run.image_classes
    paired = np.full(len(found.asset_ids), -1, dtype=np.int64)
    paired[run.paired] = np.arange(len(run.paired))
    shown = {name: i for i, name in enumerate(names)}
    to_shown = np.asarray([shown.get(name, -1) for name in found.class_names] or [-1], dtype=np.int64)
    image, class_id = paired[found.image], to_shown[found.class_id]
    keep = (image >= 0) & (class_id >= 0)
    return ClassRows(image[keep], class_id[keep], found.counts[keep])


def class_differences(a: RunFigures, b: RunFigures, images: int) -> tuple[ClassDifference, ...]:
    """Every class with a box in A or B, most boxes (of both) first, ties in A's class order, with
    the interval of B - A of its score over the paired images."""
    names = [*a.classes.names, *(name for name in b.classes.names if name not in set(a.classes.names))]
    counts_a, counts_b = _aligned(a.classes, names), _aligned(b.classes, names)
    scores_a, scores_b = OutcomeCounts(counts_a).scores, OutcomeCounts(counts_b).scores
    boxes_a, boxes_b = counts_a.sum(axis=1), counts_b.sum(axis=1)
    rows = np.flatnonzero(boxes_a + boxes_b > 0)
    rows = rows[np.lexsort((rows, -(boxes_a + boxes_b)[rows]))].tolist()
    shown = [names[row] for row in rows]
    intervals = class_intervals((_class_rows(a, shown), _class_rows(b, shown)), images, len(shown))
    return tuple(
        ClassDifference(
            class_name=names[row],
            score_a=float(scores_a[row]),
            score_b=float(scores_b[row]),
            difference=float(scores_b[row] - scores_a[row]),
            boxes_a=int(boxes_a[row]),
            boxes_b=int(boxes_b[row]),
            low=interval.low,
            high=interval.high,
        )
        for row, interval in zip(rows, intervals, strict=True)
    )


def _changes(matrix: IntArray, nouns: ShapeWords) -> tuple[str, ...]:
    """The largest moves off the diagonal, most boxes first (ties in outcome order)."""
    n = len(GT_OUTCOMES)
    cells = [(-int(matrix[i, j]), i, j) for i in range(n) for j in range(n) if i != j and matrix[i, j]]
    words = [OUTCOME_WORDS[outcome] for outcome in GT_OUTCOMES]
    return tuple(
        f"B turned {nouns.count(-count, words[i])} into {words[j]} ones"
        for count, i, j in sorted(cells)[:TOP_CHANGES]
    )


class PairedImages(msgspec.Struct, frozen=True):
    """The images scored in both runs: their asset ids, and each one's rows in A's image order."""

    asset_ids: list[str]
    rows_a: IntArray


def transitions_section(
    moved: Transitions, images: PairedImages, counts: tuple[IntArray, IntArray]
) -> BoxTransitions:
    """The transitions' figures; `counts` are A's and B's outcome counts on the paired images."""
    added = moved.added_seconds
    worse, better = moved.by_image(added > 0)[images.rows_a], moved.by_image(added < 0)[images.rows_a]
    image_seconds = OutcomeCounts(counts[1] - counts[0]).labeler_seconds(moved.costs)
    lost = np.flatnonzero(image_seconds > 0)
    lost = lost[np.lexsort((lost, -image_seconds[lost]))][:TOP_IMAGES].tolist()
    matrix = moved.matrix
    return BoxTransitions(
        outcomes=tuple(outcome.key for outcome in GT_OUTCOMES),
        counts=tuple(tuple(row) for row in matrix.tolist()),
        seconds=tuple(moved.costs.seconds(outcome) for outcome in GT_OUTCOMES),
        boxes=int(matrix.sum()),
        worse=int(np.count_nonzero(added > 0)),
        better=int(np.count_nonzero(added < 0)),
        changes=_changes(matrix, shape_words(moved.costs.shape)),
        images_b_lost_most=tuple(
            TransitionImage(
                asset_id=images.asset_ids[row],
                seconds_added=float(image_seconds[row]),
                worse=int(worse[row]),
                better=int(better[row]),
            )
            for row in lost
        ),
    )


def _better(score: Difference) -> Better:
    if score.low > 0:
        return "B"
    return "A" if score.high < 0 else "neither"


class RunFigures(msgspec.Struct, frozen=True):
    """What the comparison reads of one run: per-image counts on the paired images, by class, the sweep,
    its (image, class) rows and which of its images are paired (its image rows in pair order)."""

    dataset: str
    counts: IntArray
    classes: ClassCounts
    sweep: Sweep
    image_classes: ImageClassRows
    paired: IntArray


def build_comparison(
    gt: str,
    runs: tuple[RunFigures, RunFigures],
    paired: PairedBootstrap,
    costs: TimeCosts,
    options: tuple[Thresholds, bool],
    transitions: BoxTransitions,
    shape_note: str | None = None,
) -> Comparison:
    """The comparison of A and B; `options` are both runs' thresholds and whether A and B are the same;
    `costs.shape` is what both runs were scored on, `shape_note` why boxes where one had masks."""
    a, b = runs
    thresholds, same = options
    score, saved = paired.score, paired.seconds_saved
    return Comparison(
        better=_better(score),
        difference=ScoreDifference(score=score.value, low=score.low, high=score.high),
        time_saved_difference=TimeDifference(seconds=saved.value, low=saved.low, high=saved.high),
        per_class=class_differences(a, b, paired.images),
        transitions=transitions,
        scored_on=costs.shape,
        scored_on_note=shape_note,
        context=ComparisonContext(
            gt=gt,
            a=_side(a.dataset, a.counts, a.sweep, costs, thresholds.confidence_threshold),
            b=_side(b.dataset, b.counts, b.sweep, costs, thresholds.confidence_threshold),
            thresholds=ComparedThresholds(**asdict(thresholds)),
            same_predictions=same,
            images=paired.images,
            resamples=paired.resamples,
            level=float(paired.level),
            seed=SEED,
        ),
    )


def compare_verdict(found: Comparison) -> str:
    """One sentence: which set leaves less work, or that the images cannot tell."""
    d = found.difference
    if found.context.same_predictions:
        return "A and B are the same predictions: every image has the same outcomes at every threshold."
    sure = between(d.low, d.high, _score_change, found.context.level)
    scores = f"B scores {_score_change(d.score)} than A ({sure})"
    if found.better == "neither":
        return f"Neither prediction set is clearly better on these images: {scores}."
    return f"Prediction set {found.better} leaves less correction work: {scores}."


def scored_on_line(found: Comparison) -> str | None:
    """What the pairs were measured by, when it is not plainly boxes."""
    if found.scored_on_note:
        return found.scored_on_note
    if found.scored_on == "masks":
        return "Both scored on masks: a pair's IoU is its instance masks'."
    return None


def compare_summary(found: Comparison) -> str:
    """The CLI's few lines without --json."""
    c, t = found.context, found.time_saved_difference
    shape = scored_on_line(found)
    lines = [
        compare_verdict(found),
        *([shape] if shape else []),
        *(_side_line(name, side) for name, side in (("A", c.a), ("B", c.b))),
        f"time saved: B saves {_time_change(t.seconds)} than A "
        f"({between(t.low, t.high, _time_change, c.level)})",
        _transitions_line(found.transitions, found.words),
        f"{counted(c.images, 'image', 'images')} paired by asset id, "
        f"{c.resamples} paired bootstrap resamples (seed {c.seed})",
    ]
    return "\n".join(lines)


def _score_change(value: float) -> str:
    """`0.09 lower`, `0.02 higher`, `no different`."""
    return change(value, score_text, "higher", "lower")


def _time_change(seconds: float) -> str:
    """`25 min less`, `3 min more`, `no different`."""
    return change(seconds, duration, "more", "less")


def _transitions_line(moved: BoxTransitions, words: ShapeWords) -> str:
    """How many GT boxes (masks) B made worse and better, and its largest move."""
    largest = f"; {moved.changes[0]}" if moved.changes else ""
    return (
        f"{words.one} by {words.one}: B worse on {moved.worse}, better on {moved.better} of "
        f"{words.count(moved.boxes, 'GT')}{largest}"
    )


def _side_line(name: str, side: Side) -> str:
    figures = f"score {side.assistance_score:.2f} · {side.grade} · {saving(side.saved_seconds)}"
    return f"{name}: {figures}  ({side.dataset})"
