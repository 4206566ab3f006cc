"""The geometry of the page's figures: numbers in, positions out; report_templates/charts.html.j2 draws them.

Every figure is static inline SVG (the preview widget is a sandboxed iframe: no script, nothing
fetched). The templates print text from a dataset through jinja2's autoescaping, in SVG `<text>`
and `<title>` as anywhere else. The figures' many small parts, a sketch's boxes and the per-class
bars, are written here as SVG strings instead (`sketch_shapes`, `class_bars`: a template macro per
box or segment was most of the page's render), their text through markupsafe's `escape`, as
jinja2's autoescaping does it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Generic, Protocol, TypeVar

import msgspec
import orjson
from markupsafe import Markup, escape

from handler.engine.outcomes import Outcome
from handler.engine.timecost import ACTIONS
from handler.sections.wording import MINUS, ShapeWords, duration, score_text

# One colour per labeler action (and so per outcome), the same in every figure and legend.
ACTION_COLORS: Final = dict(
    zip(ACTIONS, ("#1a7f4b", "#2b6cb0", "#805ad5", "#dd6b20", "#c53030"), strict=True)
)
SCRATCH_COLOR: Final = "#a0aec0"
# Grade bands, worst first (the gauge's colours).
BAND_COLORS: Final = ("#c53030", "#dd6b20", "#b7791f", "#1a7f4b")
WIDTH: Final = 860.0  # every wide figure's viewBox width; it scales down to the page's width
LABEL_WIDTH: Final = 170.0  # the left column of the bar charts (row names)
VALUE_WIDTH: Final = 240.0  # the right column (a row's value, its routing decision)
ROW: Final = 22.0
NAME_CHARS: Final = 22  # longer names are cut (the whole name is the row's <title>)


def cut(name: str, limit: int = NAME_CHARS) -> str:
    """A name short enough for its column: `a very long class na…`."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def outline_path(outline: tuple[tuple[float, ...], ...]) -> str:
    """An SVG path's `d` of a sketch's outline (closed loops, each its points flat). orjson writes
    the numbers, one call per outline, as Python would (the shortest that reads back the same)
    but faster: their formatting dominated a mask page's render. Only a number below 1e-4 is
    spelled otherwise (`0.00001`, `1e-7`; Python: `1e-05`, `1e-07`), the same to an SVG reader."""
    if not outline:
        return ""
    rings = orjson.dumps(outline).decode()[2:-2].replace(",", " ").split("] [")
    return "".join([_ring_path(ring) for ring in rings])


def _ring_path(numbers: str) -> str:
    """`M x0 y0 L x1 y1 … Z` (without spaces after the letters) of a loop's numbers, spaced."""
    second = numbers.find(" ", numbers.find(" ") + 1)
    return f"M{numbers}LZ" if second < 0 else f"M{numbers[:second]}L{numbers[second + 1 :]}Z"


def box_place(box: Sequence[float], angle: float) -> str:
    """A sketch's box as `rect` attributes: its place and size, turned `angle` degrees about its centre."""
    x0, y0, x1, y1 = box
    place = f'x="{x0:.4g}" y="{y0:.4g}" width="{x1 - x0:.4g}" height="{y1 - y0:.4g}"'
    if not angle:
        return place
    return f'{place} transform="rotate({angle:.4g} {(x0 + x1) / 2:.5g} {(y0 + y1) / 2:.5g})"'


class SketchShape(Protocol):
    """One box of a sketch (the sketches feature's `SketchBox`): what its shape and title are drawn from."""

    @property
    def side(self) -> str: ...
    @property
    def box(self) -> tuple[float, float, float, float]: ...
    @property
    def angle(self) -> float: ...
    @property
    def class_name(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def confidence(self) -> float | None: ...
    @property
    def uncertain(self) -> bool: ...
    @property
    def outline(self) -> tuple[tuple[float, ...], ...]: ...


SIDE_NAMES: Final = {"gt": "ground truth", "pred": "prediction"}
OUTCOME_ACTIONS: Final = {outcome.key: outcome.action for outcome in Outcome}


def sketch_shape(shape: SketchShape, words: ShapeWords) -> str:
    """A sketch's box (or its outline) as SVG, its side, class and outcome as its hover title: one
    string built here, since a template's macro per box, its escapes and filters, dominated the
    page's render."""
    place = f'd="{outline_path(shape.outline)}"' if shape.outline else box_place(shape.box, shape.angle)
    element = "path" if shape.outline else "rect"
    uncertain = " uncertain" if shape.uncertain else ""
    confidence = "" if shape.confidence is None else f" {shape.confidence:.2f}"
    missed = " (missed)" if shape.outcome == "false_negative" else ""
    marked = " (uncertain confidence)" if shape.uncertain else ""
    action = words.action(OUTCOME_ACTIONS[shape.outcome])
    title = f"{SIDE_NAMES[shape.side]} {shape.class_name}{confidence}: {action}{missed}{marked}"
    return (
        f'<{element} {place} class="{shape.side} {shape.outcome}{uncertain}">'
        f"<title>{escape(title)}</title></{element}>"
    )


def sketch_shapes(shapes: Sequence[SketchShape], words: ShapeWords) -> Markup:
    """Every box of a sketch as SVG, in order (at most `MAX_SKETCH_BOXES`); every dataset string escaped."""
    return Markup("".join([sketch_shape(shape, words) for shape in shapes]))


def sketch_marks(marks: Sequence[tuple[Sequence[float], float]]) -> Markup:
    """The boxes a sketch is drawn for (a suspected error, a near miss's pair), each (box, angle)."""
    return Markup("".join([f'<rect {box_place(box, angle)} class="mark"/>' for box, angle in marks]))


class Counts(Protocol):
    """Boxes per outcome (the findings' `Counts`): what a bar of labeler time is drawn from."""

    def outcomes(self) -> dict[str, int]: ...


class Segment(msgspec.Struct, frozen=True):
    key: str  # the action
    x: float
    width: float
    seconds: float
    boxes: int


def seconds_by_action(counts: Counts, costs: dict[str, float]) -> dict[str, tuple[int, float]]:
    """Each action's boxes and labeler seconds, in action order."""
    boxes = dict(zip(ACTIONS, counts.outcomes().values(), strict=True))
    return {action: (boxes[action], boxes[action] * costs[action]) for action in ACTIONS}


def labeler_total(counts: Counts, costs: dict[str, float]) -> float:
    return sum(seconds for _, seconds in seconds_by_action(counts, costs).values())


def segments(by_action: dict[str, tuple[int, float]], left: float, scale: float) -> list[Segment]:
    """The actions of one bar, side by side from `left`, `scale` units per second."""
    result, x = [], left
    for key, (boxes, seconds) in by_action.items():
        width = seconds * scale
        if width > 0:
            result.append(Segment(key, round(x, 2), round(width, 2), seconds, boxes))
        x += width
    return result


class TimeBar(msgspec.Struct, frozen=True):
    """Where the labeler's time goes: with the predictions (by action) against from scratch."""

    with_predictions: list[Segment]
    scratch_width: float
    with_seconds: float
    scratch_seconds: float
    by_action: dict[str, tuple[int, float]]
    left: float
    plot: float  # the bars' full width


def time_bar(counts: Counts, costs: dict[str, float], from_scratch: float) -> TimeBar:
    by_action = seconds_by_action(counts, costs)
    with_seconds = sum(seconds for _, seconds in by_action.values())
    plot = WIDTH - LABEL_WIDTH - 110
    scale = plot / max(with_seconds, from_scratch, 1e-9)
    return TimeBar(
        segments(by_action, LABEL_WIDTH, scale),
        round(from_scratch * scale, 2),
        with_seconds,
        from_scratch,
        by_action,
        LABEL_WIDTH,
        plot,
    )


class SavingBar(msgspec.Struct, frozen=True):
    label: str
    seconds: float  # saved (negative: lost)
    x: float
    width: float
    y: float
    low: float | None  # the interval's ends, in the figure's units (None: no interval)
    high: float | None
    interval: tuple[float, float] | None  # in seconds


class SavingBars(msgspec.Struct, frozen=True):
    """Time saved by a few policies, on one scale from zero (losses to the left of it)."""

    bars: list[SavingBar]
    zero: float
    height: float
    scratch_seconds: float
    left: float = LABEL_WIDTH  # where the bars' labels end


def saving_bars(rows: list[tuple[str, float, tuple[float, float] | None]], scratch: float) -> SavingBars:
    """One bar per (label, seconds saved, its interval or None), on one scale from zero."""
    ends = [0.0] + [v for _, seconds, ci in rows for v in (seconds, *(ci or ()))]
    low, high = min(ends), max(ends)
    plot = WIDTH - LABEL_WIDTH - 150  # room on the right for the value, past the interval's end
    scale = plot / max(high - low, 1e-9)
    zero = LABEL_WIDTH - low * scale

    def at(seconds: float) -> float:
        return round(float(zero + seconds * scale), 2)

    bars = [
        SavingBar(
            label,
            seconds,
            min(at(0), at(seconds)),
            round(abs(seconds) * scale, 2),
            index * 30.0,
            None if interval is None else at(interval[0]),
            None if interval is None else at(interval[1]),
            interval,
        )
        for index, (label, seconds, interval) in enumerate(rows)
    ]
    return SavingBars(bars, round(zero, 2), len(rows) * 30.0 + 6, scratch)


class ClassBar(msgspec.Struct, frozen=True):
    name: str
    label: str  # the name cut to its column
    y: float
    segments: list[Segment]
    seconds: float
    score: float
    decision: str  # `pre-label ≥ 0.45`, `draw`


class ClassChart(msgspec.Struct, frozen=True):
    rows: list[ClassBar]
    height: float
    left: float
    plot: float


ClassRow = tuple[str, Counts, float, str]  # name, outcome counts, score, routing decision


def class_chart(rows: list[ClassRow], costs: dict[str, float], most: float) -> ClassChart:
    """One bar per class (name, counts, score, routing decision) of labeler seconds by action.

    `most` is the longest bar's seconds over the whole class list, so a folded tail keeps the scale.
    """
    plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    scale = plot / max(most, 1e-9)
    bars = []
    for index, (name, counts, score, decision) in enumerate(rows):
        by_action = seconds_by_action(counts, costs)
        bars.append(
            ClassBar(
                name,
                cut(name),
                index * ROW,
                segments(by_action, LABEL_WIDTH, scale),
                sum(seconds for _, seconds in by_action.values()),
                score,
                decision,
            )
        )
    return ClassChart(bars, len(rows) * ROW, LABEL_WIDTH, plot)


def class_bar(row: ClassBar, left: float, words: ShapeWords) -> str:
    """One class's bar as SVG: its name, its actions' segments, its time left and its decision,
    with their hover titles. Built here, not by a template loop per segment: a long class list's
    macros and escapes were much of the page's render."""
    name, top, base = escape(row.name), row.y + 4, row.y + 15
    decision = f", {row.decision}" if row.decision else ""
    bars = "".join(
        [
            f'<rect x="{s.x}" y="{top}" width="{s.width}" height="14" fill="{ACTION_COLORS[s.key]}">'
            f"<title>{name} · {escape(words.action(s.key))}: {escape(words.count(s.boxes))}, "
            f"{escape(duration(s.seconds))}</title></rect>"
            for s in row.segments
        ]
    )
    end = left + sum(s.width for s in row.segments) + 6
    tone = "draw" if row.decision == "draw" else "prelabel"
    return (
        f'<g data-class-row>\n    <text x="{left - 8}" y="{base}" text-anchor="end" class="axis" '
        f'data-field="class_label">{escape(row.label)}</text><title>{name}: '
        f"{escape(duration(row.seconds))} left, score {score_text(row.score)}{escape(decision)}</title>\n"
        f'    {bars}\n    <text x="{end}" y="{base}" class="value">{escape(duration(row.seconds))}</text>\n'
        f'    <text x="{WIDTH - 4}" y="{base}" text-anchor="end" class="decision {tone}" '
        f'data-field="decision">{escape(row.decision)}</text>\n  </g>'
    )


def class_bars(chart: ClassChart, words: ShapeWords) -> Markup:
    """Every class's bar of `chart` as SVG (`class_bar`), every dataset string escaped."""
    return Markup("".join([class_bar(row, chart.left, words) for row in chart.rows]))


class Line(msgspec.Struct, frozen=True):
    points: str
    key: str


class Mark(msgspec.Struct, frozen=True):
    x: float
    y_score: float
    threshold: float
    score: float
    saved_share: float


class SweepFigure(msgspec.Struct, frozen=True):
    score: Line
    saved: Line
    used: Mark
    best: Mark
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    plot: tuple[float, float, float, float]  # left, right, top, bottom
    y_floor: float  # the y axis' lowest value (below 0 when time is lost at some threshold)
    clipped: bool  # some time share lies below the floor


SWEEP_HEIGHT: Final = 250.0
SWEEP_PLOT: Final = (52.0, WIDTH - 20.0, 14.0, SWEEP_HEIGHT - 40.0)
SWEEP_FLOOR: Final = -1.0  # time lost beyond the from-scratch time itself is drawn at the floor


def sweep_figure(points: list[tuple[float, float, float]], used: float, best: float) -> SweepFigure:
    """`points`: (threshold, score, share of from-scratch time saved) for every threshold of the sweep."""
    left, right, top, bottom = SWEEP_PLOT
    # Clamped before rounding: a share of minus infinity (seconds near zero) is drawn at the floor.
    lowest = min([0.0, *(share for _, _, share in points)])
    floor = math.floor(max(SWEEP_FLOOR, lowest) / 0.25) * 0.25

    def xy(threshold: float, value: float) -> tuple[float, float]:
        shown = max(value, floor)
        return (
            round(left + threshold * (right - left), 2),
            round(bottom - (shown - floor) / (1 - floor) * (bottom - top), 2),
        )

    def line(column: int, key: str) -> Line:
        return Line(" ".join("{},{}".format(*xy(p[0], p[column])) for p in points), key)

    def mark(threshold: float) -> Mark:
        point = next(p for p in points if p[0] == threshold)
        x, y = xy(point[0], point[1])
        return Mark(x, y, point[0], point[1], point[2])

    ticks = [floor + step * 0.25 for step in range(round((1 - floor) / 0.25) + 1)]
    return SweepFigure(
        score=line(1, "score"),
        saved=line(2, "saved"),
        used=mark(used),
        best=mark(best),
        x_ticks=[(xy(t, 0)[0], f"{t:g}") for t in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)],
        y_ticks=[(xy(0, t)[1], f"{t:g}") for t in ticks],
        plot=SWEEP_PLOT,
        y_floor=floor,
        clipped=lowest < floor,
    )


Chart = TypeVar("Chart")
Row = TypeVar("Row")
# Class rows shown before the rest is folded.
CLASS_HEAD: Final = 15


class Folded(msgspec.Struct, Generic[Chart], frozen=True):
    head: Chart
    tail: Chart | None


def folded(chart: Callable[[list[Row]], Chart], rows: list[Row]) -> Folded[Chart]:
    """The first CLASS_HEAD rows as one chart, the long tail (if any) as another, to fold."""
    tail = rows[CLASS_HEAD:]
    return Folded(chart(rows[:CLASS_HEAD]), chart(tail) if tail else None)


class ClassPair(msgspec.Struct, frozen=True):
    name: str
    label: str
    y: float
    a: float  # bar widths: the scores of A and B
    b: float
    score_a: float
    score_b: float
    difference: float
    low: float  # the interval of B - A, on the difference axis
    high: float
    at: tuple[float, float, float]  # x of the difference, of its low end and of its high end


class PairChart(msgspec.Struct, frozen=True):
    rows: list[ClassPair]
    height: float
    left: float
    plot: float
    axis: DifferenceAxis


class DifferenceAxis(msgspec.Struct, frozen=True):
    """A symmetric axis around 0 from `left` over `plot` units, -bound to +bound."""

    left: float
    plot: float
    bound: float

    def at(self, value: float) -> float:
        return round(self.left + (value + self.bound) / (2 * self.bound) * self.plot, 2)

    @property
    def zero(self) -> float:
        return self.at(0.0)

    @property
    def ticks(self) -> list[tuple[float, str]]:
        b = self.bound
        labels = {t: f"{t:+g}".replace("-", MINUS) if t else "0" for t in (-b, -b / 2, 0.0, b / 2, b)}
        return [(self.at(t), label) for t, label in labels.items()]


def symmetric_bound(*values: float) -> float:
    """The axis end (a tenth, 0.1 to 1) that holds every value."""
    largest = max([0.0, *(abs(value) for value in values)])
    return min(1.0, max(0.1, math.ceil(largest * 10 + 1e-9) / 10))


PAIR_ROW: Final = 30.0
PAIR_BARS: Final = 340.0  # the 0-1 score bars of A and B
PAIR_GAP: Final = 44.0
PAIR_VALUE: Final = 56.0  # the right column: B - A as text


def pair_chart(rows: list[tuple[str, float, float, float, float]], bound: float) -> PairChart:
    """Per class (name, score of A, score of B, interval of B - A): two bars on one 0-1 scale, then
    B - A with its interval on a symmetric axis (-bound to +bound, shared by the folded charts)."""
    left = LABEL_WIDTH + PAIR_BARS + PAIR_GAP
    axis = DifferenceAxis(left, WIDTH - left - PAIR_VALUE - 12, bound)
    pairs = [
        ClassPair(
            name,
            cut(name),
            i * PAIR_ROW,
            round(a * PAIR_BARS, 2),
            round(b * PAIR_BARS, 2),
            a,
            b,
            b - a,
            low,
            high,
            (axis.at(b - a), axis.at(low), axis.at(high)),
        )
        for i, (name, a, b, low, high) in enumerate(rows)
    ]
    return PairChart(pairs, len(rows) * PAIR_ROW, LABEL_WIDTH, PAIR_BARS, axis)


class DifferenceFigure(msgspec.Struct, frozen=True):
    """B - A with its interval on a symmetric axis around 0."""

    zero: float
    value: float
    low: float
    high: float
    bound: float  # the axis runs from -bound to +bound
    ticks: list[tuple[float, str]]


def difference_figure(value: float, low: float, high: float, width: float = 420.0) -> DifferenceFigure:
    axis = DifferenceAxis(20.0, width - 40.0, symmetric_bound(low, high, value))
    return DifferenceFigure(axis.zero, axis.at(value), axis.at(low), axis.at(high), axis.bound, axis.ticks)


GRID_LABEL: Final = 130.0  # the row names' column
GRID_HEAD: Final = 40.0  # the column names' row
GRID_CELL: Final = (104.0, 40.0)


class TransitionCell(msgspec.Struct, frozen=True):
    """One cell of the transitions grid: where it is, its count, and whether B's outcome there
    costs more (`worse`), less (`better`) or the same as A's; `strength` in 0-1 shades it."""

    x: float
    y: float
    count: int
    tone: str  # "same", "worse" or "better"
    strength: float


class TransitionGrid(msgspec.Struct, frozen=True):
    cells: list[TransitionCell]
    rows: list[tuple[float, str]]  # each row's middle and its outcome under A
    columns: list[tuple[float, str]]  # each column's middle and its outcome under B
    width: float
    height: float
    label_end: float = GRID_LABEL - 8  # where the row names end
    head_base: float = GRID_HEAD - 8  # the column names' baseline


def transition_grid(counts: list[list[int]], labels: list[str], seconds: list[float]) -> TransitionGrid:
    """A row per outcome under A, a column per outcome under B; a cell off the diagonal is worse
    when B's outcome takes the labeler more seconds, shaded by its share of the largest move."""
    cell_w, cell_h = GRID_CELL
    moved = [count for i, row in enumerate(counts) for j, count in enumerate(row) if i != j]
    most = max(moved, default=0) or 1
    cells = [
        TransitionCell(
            GRID_LABEL + j * cell_w,
            GRID_HEAD + i * cell_h,
            count,
            "same" if seconds[j] == seconds[i] else "worse" if seconds[j] > seconds[i] else "better",
            0.0 if i == j else count / most,
        )
        for i, row in enumerate(counts)
        for j, count in enumerate(row)
    ]
    rows = [(GRID_HEAD + (i + 0.5) * cell_h, label) for i, label in enumerate(labels)]
    columns = [(GRID_LABEL + (j + 0.5) * cell_w, label) for j, label in enumerate(labels)]
    size = (GRID_LABEL + len(labels) * cell_w, GRID_HEAD + len(labels) * cell_h)
    return TransitionGrid(cells, rows, columns, *size)
