"""Labeler time with the predictions vs from scratch, from a cost per action (contract §6, §13).

Defaults: verifying a box (accept) 1.8 s and drawing one 25.5 s are measured in the literature
(CITED); nudge, relabel and delete have no primary source we know, and are assumptions (ASSUMED;
docs/time-costs.md says so).
A team's own seconds come in a costs file (`prelabel-eval calibrate` writes one): `TimeCosts.
from_json`, whose `fit` says what they were fitted from and how sure the fit is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal, cast, get_args

import msgspec
import numpy as np
import orjson
from msgspec import field
from msgspec.structs import fields, replace

from handler.boxes import FloatArray
from handler.engine.outcomes import Outcome

# The labeler's action of each outcome (contract §6), in Outcome order: a view of `Outcome.action`.
ACTIONS: Final = tuple(outcome.action for outcome in Outcome)
# The most seconds one action may cost: a day. No labeler takes longer on one box, and a bound
# keeps every sum of the report finite (1e308 seconds a box would overflow it).
SECONDS_MAX: Final = 86_400.0
# Counts in a costs file are written back as JSON integers of 64 bits.
COUNT_LIMIT: Final = 2**63
# How well a lead-time fit explains the task times: calibrate writes all three or none.
FIT_QUALITY: Final = ("overhead_seconds", "r2", "rmse_seconds")


def is_seconds(value: Any) -> bool:
    """Whether `value` is seconds an action may cost: a number from 0 to SECONDS_MAX (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value <= SECONDS_MAX


DRAW_SOURCE: Final = (
    "Su, Deng, Fei-Fei (2012), Crowdsourcing Annotations for Visual Object Detection, "
    "AAAI Workshop on Human Computation: 25.5 s to draw a box (about 35 s with their quality "
    "control, as Papadopoulos et al., ICCV 2017, Extreme clicking, count it; extreme clicking "
    "itself takes about 7 s)"
)
VERIFY_SOURCE: Final = (
    "Papadopoulos, Uijlings, Keller, Ferrari (2016), We don't need no bounding-boxes, CVPR: "
    "verifying a box takes about 1.6-1.8 s; 1.8 s is the verification time Konyushkova et al., "
    "CVPR 2018, use (google/intelligent_annotation_dialogs)"
)
# The defaults measured in the literature, by action; the others are ASSUMED.
CITED: Final = {"accept": VERIFY_SOURCE, "draw": DRAW_SOURCE}
ASSUMED: Final = {
    "nudge": "dragging one or two edges of a box onto the object",
    "relabel": "picking the right class for a well-placed box",
    "delete": "selecting an invented box and deleting it",
}

POLYGON_SOURCE: Final = (
    "Lin et al. (2014), Microsoft COCO: Common Objects in Context, ECCV: 22 worker hours per "
    "1,000 instance segmentations, about 79 s to draw an object's polygon"
)
CORRECTION_SOURCE: Final = (
    "Benenson, Popov, Ferrari (2019), Large-scale interactive object segmentation with human "
    "annotators, CVPR: corrective clicks on a model's mask reach polygon quality about 3x faster "
    "than drawing the polygon (79 s / 3); Kirillov et al. (2023), Segment Anything, ICCV: 34 s a "
    "mask falling to 14 s as the model in the loop improved"
)
# What a mask costs: drawing and fixing an outline are measured (MASK_CITED); the others are a
# box's, assumed to cost the same on a mask (MASK_ASSUMED).
MASK_SECONDS: Final = {"accept": 1.8, "nudge": 26.4, "relabel": 4.0, "delete": 2.0, "draw": 79.2}
MASK_CITED: Final = {"draw": POLYGON_SOURCE, "nudge": CORRECTION_SOURCE}
MASK_ASSUMED: Final = {
    "accept": "looking a mask over, as long as verifying a box (1.8 s, Papadopoulos et al. 2016)",
    "relabel": "picking the right class for a well-drawn mask",
    "delete": "selecting an invented mask and deleting it",
}
Shape = Literal["boxes", "masks"]


class ActionFit(msgspec.Struct, frozen=True):
    """One action's fitted seconds: the bootstrap interval, and how many tasks showed it."""

    interval: tuple[float, float]
    support: int
    fitted: bool  # False: too few tasks showed it, so its default was kept


class CostFit(msgspec.Struct, frozen=True):
    """Whose seconds these are: the log they were fitted from, and how sure the fit is."""

    files: tuple[str, ...]
    log_format: str
    tasks: int  # the resampling unit of the fit (Label Studio tasks, CVAT jobs)
    unit: str
    date: str  # ISO date of the fit
    actions: Mapping[str, ActionFit]
    replicates: FloatArray  # (resamples, n_actions) the seconds of each bootstrap resample, ACTIONS order
    skipped: Mapping[str, int] = field(default_factory=dict)  # why, how many
    assumed: Mapping[str, int] = field(default_factory=dict)  # records read by an assumption: which, how many
    overhead_seconds: float | None = None  # per task besides the actions (lead-time fits)
    r2: float | None = None
    rmse_seconds: float | None = None
    shape: Shape = "boxes"  # what the labelers of the log drew

    @property
    def source(self) -> str:
        """`fitted from 412 tasks of export.json, 2026-11-30`."""
        return f"fitted from {self.tasks} {self.unit} of {', '.join(self.files)}, {self.date}"


class TimeCosts(msgspec.Struct, frozen=True):
    """Seconds per labeler action: the defaults (CITED or ASSUMED), or a team's own (`fit`)."""

    accept: float = 1.8
    nudge: float = 6.0
    relabel: float = 4.0
    delete: float = 2.0
    draw: float = 25.5
    # What fitted these seconds; None for the defaults or seconds given by hand.
    fit: CostFit | None = None
    # What the labeler corrects: boxes, or masks (the "nudge" is then fixing the outline).
    shape: Shape = "boxes"

    def __eq__(self, other: object) -> bool:
        """Equal seconds: two costs with the same seconds price the same work, whatever fitted them."""
        return isinstance(other, TimeCosts) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().values()))

    def __post_init__(self) -> None:
        for action in ACTIONS:
            value = getattr(self, action)
            if not is_seconds(value):
                raise ValueError(
                    f"Expected the {action} time cost in seconds (0 to {SECONDS_MAX:g}) but got {value!r}"
                )

    def on_masks(self) -> TimeCosts:
        """The same costs for masks: an action at a box's default seconds (not given, or given
        as that default) costs a mask's instead (MASK_SECONDS)."""
        boxes = {f.name: f.default for f in fields(TimeCosts) if f.name in ACTIONS}
        changes: dict[str, Any] = {a: MASK_SECONDS[a] for a in ACTIONS if getattr(self, a) == boxes[a]}
        return replace(self, **changes, shape="masks")

    @property
    def defaults(self) -> TimeCosts:
        """The default costs of the same shape."""
        return TimeCosts().on_masks() if self.shape == "masks" else TimeCosts()

    @property
    def sources(self) -> tuple[dict[str, str], dict[str, str]]:
        """The defaults' sources, cited and assumed, by action, for this shape."""
        return (
            (dict(MASK_CITED), dict(MASK_ASSUMED)) if self.shape == "masks" else (dict(CITED), dict(ASSUMED))
        )

    def seconds(self, outcome: Outcome) -> float:
        """What the action of `outcome` costs."""
        return float(getattr(self, outcome.cost_field))

    def per_outcome(self) -> FloatArray:
        """Seconds indexed by Outcome."""
        return np.asarray([self.seconds(outcome) for outcome in Outcome], dtype=np.float64)

    def to_dict(self) -> dict[str, float]:
        return {outcome.cost_field: self.seconds(outcome) for outcome in Outcome}

    @classmethod
    def from_json(cls, content: bytes, name: str) -> TimeCosts:
        """The costs of a costs file's bytes (`{"seconds": {"draw": 30, ...}, ...}`; `calibrate`
        writes one); `name` names it in the ValueError that says what was expected. The engine
        reads no file: the inputs do (`inputs.read_time_costs`)."""
        try:
            document = orjson.loads(content)
        except orjson.JSONDecodeError as error:
            where = f"{name}: line {error.lineno} column {error.colno}"
            raise ValueError(f"{where}: expected a JSON costs file ({error.msg})") from None
        try:
            return cls.from_document(document)
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None

    @classmethod
    def from_document(cls, document: Any) -> TimeCosts:
        """The costs of a decoded costs file; actions it does not name keep their defaults."""
        seconds = _mapping(document, "the costs file").get("seconds")
        given = _mapping(seconds, "seconds")
        unknown = sorted(set(given) - set(ACTIONS))
        if unknown:
            raise ValueError(f"seconds: unknown action {unknown[0]!r}: expected {', '.join(ACTIONS)}")
        for action, value in given.items():
            if not is_seconds(value):
                raise ValueError(
                    f"seconds.{action}: expected seconds, a number from 0 to {SECONDS_MAX:g}, "
                    f"but got {value!r}"
                )
        fit = _cost_fit(document["fitted_from"]) if "fitted_from" in document else None
        chosen: dict[str, Any] = {action: float(value) for action, value in given.items()}
        return cls(**chosen, fit=fit, shape=_shape(document.get("shape", "boxes")))

    def to_document(self) -> dict[str, Any]:
        """The costs file's JSON object: `from_document` reads it back."""
        document: dict[str, Any] = {"seconds": self.to_dict()}
        if self.shape != "boxes":
            document["shape"] = self.shape
        if self.fit is not None:
            document["fitted_from"] = _fit_document(self.fit)
        return document


def _shape(value: Any) -> Shape:
    for shape in get_args(Shape):
        if value == shape:
            return cast(Shape, shape)
    raise ValueError(f"shape: expected {' or '.join(get_args(Shape))}, but got {value!r}")


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def _fit_document(fit: CostFit) -> dict[str, Any]:
    return {
        "files": list(fit.files),
        "format": fit.log_format,
        "tasks": fit.tasks,
        "unit": fit.unit,
        "date": fit.date,
        "skipped": dict(fit.skipped),
        "assumed": dict(fit.assumed),
        "intervals": {action: list(item.interval) for action, item in fit.actions.items()},
        "support": {action: item.support for action, item in fit.actions.items()},
        "kept_default": [action for action, item in fit.actions.items() if not item.fitted],
        "overhead_seconds": fit.overhead_seconds,
        "r2": fit.r2,
        "rmse_seconds": fit.rmse_seconds,
        "replicates": np.round(fit.replicates, 4).tolist(),
        "shape": fit.shape,
    }


def _cost_fit(document: Any) -> CostFit:
    """`fitted_from` of a costs file; a file that was edited by hand into nonsense is refused."""
    found = _mapping(document, "fitted_from")
    try:
        replicates = np.asarray(found["replicates"], dtype=np.float64).reshape(-1, len(ACTIONS))
        kept = set(found["kept_default"])
        actions = {
            action: ActionFit(
                (float(found["intervals"][action][0]), float(found["intervals"][action][1])),
                _count(found["support"][action], f"support.{action}"),
                action not in kept,
            )
            for action in ACTIONS
        }
        tasks = _count(found["tasks"], "tasks")
        _check_fit(actions, replicates, tasks)
        overhead, r2, rmse = (_optional_float(found.get(key)) for key in FIT_QUALITY)
        if (overhead is None) != (r2 is None) or (r2 is None) != (rmse is None):
            raise ValueError(f"{', '.join(FIT_QUALITY)}: expected all three numbers or none")
        return CostFit(
            files=tuple(str(name) for name in found["files"]),
            log_format=str(found["format"]),
            tasks=tasks,
            unit=str(found["unit"]),
            date=str(found["date"]),
            actions=actions,
            replicates=replicates,
            skipped=_counts(found.get("skipped", {}), "skipped"),
            assumed=_counts(found.get("assumed", {}), "assumed"),
            overhead_seconds=overhead,
            r2=r2,
            rmse_seconds=rmse,
            shape=_shape(found.get("shape", "boxes")),
        )
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ValueError(f"fitted_from: expected what `prelabel-eval calibrate` writes ({error!r})") from None


def _check_fit(actions: Mapping[str, ActionFit], replicates: FloatArray, tasks: int) -> None:
    """A fit's figures as calibrate writes them: seconds in range, counts not negative."""
    for action, fit in actions.items():
        low, high = fit.interval
        if not (is_seconds(low) and is_seconds(high) and low <= high):
            raise ValueError(f"intervals.{action}: {list(fit.interval)} is not low <= high seconds")
    if not bool(np.all((replicates >= 0) & (replicates <= SECONDS_MAX))):
        raise ValueError("replicates: expected seconds")


def _count(value: Any, what: str) -> int:
    """A count of tasks or records: an integer a JSON writer can write back (below 2^63)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < COUNT_LIMIT:
        raise ValueError(f"{what}: expected a count from 0 to 2^63 but got {value!r}")
    return value


def _counts(value: Any, what: str) -> dict[str, int]:
    return {str(key): _count(n, f"{what}.{key}") for key, n in _mapping(value, what).items()}


def _optional_float(value: Any) -> float | None:
    number = None if value is None else float(value)
    if number is not None and not math.isfinite(number):
        raise ValueError(f"expected a finite number but got {value!r}")
    return number


class TimeEstimate(msgspec.Struct, frozen=True):
    with_predictions: float
    from_scratch: float

    @property
    def saved(self) -> float:
        return self.from_scratch - self.with_predictions

    @property
    def saved_share(self) -> float:
        """Share of the from-scratch time saved; negative when the predictions cost time."""
        return self.saved / self.from_scratch if self.from_scratch else 0.0
