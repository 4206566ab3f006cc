"""The Python API's front door, fuzzed: hostile arguments and records for the metric classes and
the public functions. Property of every example: a result, or one TypeError / ValueError that
begins "Expected" and names the argument (and the record's index); never another exception, and
no warning but the API's own UserWarning (no numpy RuntimeWarning or ComplexWarning).

Everyday size: 60 examples a family; PRELABEL_PROPERTY_SCALE multiplies it for a long run.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from handler import PrelabelingEfficiency, compare, load_outcomes, load_records
from handler.errors import UserError
from handler.mmeval import PrelabelingEfficiencyMetric

API = settings(
    max_examples=examples(60),
    deadline=None,
    derandomize="PRELABEL_FUZZ_SEED" not in os.environ,
    suppress_health_check=list(HealthCheck),
    database=None,
)
ARGUMENT_NAMES = re.compile(
    r"^Expected `?(predictions|groundtruths|iou_min|iou_perfect|confidence_threshold|dataset_meta|"
    r"time_costs|gt_ref|pred_ref|report_id|store|gt_format|pred_format|gt_names|pred_names|gt_layout|"
    r"pred_layout|pred_box|pred_frame|pred_class_map|as many prediction records|gt|pred_a|pred_b|inputs|"
    r"costs|execution)\b"
)
OWN_WARNING = re.compile(r"^boxes skipped: |: its boxes are on an image with more than")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=4),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
# Coordinates as a detector writes them, and at the float range's edges.
coordinate = st.one_of(
    st.floats(min_value=-50, max_value=700),
    st.sampled_from([0.0, 1e-320, 1e150, 1e306, -1e306, 1.7e308, np.inf, -np.inf, np.nan]),
)
dtypes = st.sampled_from(
    [np.float64, np.float32, np.float16, np.int64, np.uint8, np.longdouble, np.complex128, np.bool_, np.str_]
)


@st.composite
def box_arrays(draw: st.DrawFn, boxes: int) -> Any:
    """(boxes, 4) corners: numpy arrays of any dtype, lists, or the wrong shape now and then."""
    corners = np.asarray(draw(st.lists(coordinate, min_size=4 * boxes, max_size=4 * boxes))).reshape(boxes, 4)
    kind = draw(st.sampled_from(["array", "list", "dtype", "shape", "value"]))
    if kind == "list":
        return corners.tolist()
    if kind == "dtype":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the test's own casts, not the API's
            return corners.astype(draw(dtypes))
    if kind == "shape":
        return draw(hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5), elements=coordinate))
    if kind == "value":
        return draw(values)
    return corners


@st.composite
def mask_arrays(draw: st.DrawFn, boxes: int) -> Any:
    """(boxes, height, width) binary masks, of another dtype or shape now and then, or any value."""
    side = draw(st.integers(min_value=1, max_value=6))
    shape = draw(
        st.sampled_from([(boxes, side, side), (boxes, side), (boxes + 1, side, side), (boxes, 0, side)])
    )
    dtype = draw(st.sampled_from([np.bool_, np.uint8, np.int64, np.float64]))
    found = draw(hnp.arrays(dtype, shape, elements=st.integers(0, 1).map(dtype)))
    return (
        draw(st.sampled_from([found, found.tolist(), None]))
        if draw(st.booleans())
        else draw(st.one_of(st.just(found), values))
    )


@st.composite
def label_arrays(draw: st.DrawFn, boxes: int) -> Any:
    names = st.sampled_from(["cat", "dog", "<b>", ""])
    ids = st.integers(min_value=-2, max_value=4)
    found = draw(
        st.one_of(
            st.lists(names, min_size=boxes, max_size=boxes),
            st.lists(ids, min_size=boxes, max_size=boxes),
            st.lists(st.one_of(names, ids), min_size=boxes, max_size=boxes),
            st.lists(st.one_of(names, ids), max_size=boxes + 2),
            values,
        )
    )
    return np.asarray(found, dtype=object) if draw(st.booleans()) and isinstance(found, list) else found


@st.composite
def records(draw: st.DrawFn, predictions: bool) -> Any:
    """A per-image record, well formed or not: keys missing or extra, fields of any kind."""
    boxes = draw(st.integers(min_value=0, max_value=4))
    record: dict[str, Any] = {"bboxes": draw(box_arrays(boxes)), "labels": draw(label_arrays(boxes))}
    if predictions and draw(st.booleans()):
        score = st.one_of(st.floats(min_value=0, max_value=1), coordinate)
        record["scores"] = draw(st.one_of(st.lists(score, min_size=boxes, max_size=boxes), values))
    if draw(st.booleans()):
        record["masks"] = draw(mask_arrays(boxes))
    dropped = draw(st.sampled_from([None, None, None, "bboxes", "labels"]))
    if dropped:
        del record[dropped]
    return draw(st.one_of(st.just(record), st.just(record), values))


batches = st.one_of(
    st.integers(min_value=0, max_value=3).flatmap(
        lambda n: st.tuples(
            st.lists(records(True), min_size=n, max_size=n), st.lists(records(False), min_size=n, max_size=n)
        )
    ),
    st.tuples(st.one_of(values, st.lists(records(True), max_size=2)), st.lists(records(False), max_size=2)),
)
metas = st.one_of(
    st.none(),
    st.just({"classes": ["cat", "dog", "<b>"]}),
    st.fixed_dictionaries({"classes": values}),
    values,
)
threshold = st.one_of(st.sampled_from([0.1, 0.3, 0.5, 0.8, 0.9]), scalars)


def _holds(call: Callable[[], Any]) -> None:
    """The property: a result, or one named TypeError / ValueError (or the node's own one-line
    error about a dataset or the store); only the API's own warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except UserError as error:
            assert "\n" not in str(error), repr(error)
        except (TypeError, ValueError) as error:
            assert ARGUMENT_NAMES.match(str(error)), repr(error)
            assert "\n" not in str(error) and len(str(error)) < 400, repr(error)
    foreign = [w for w in caught if w.category is not UserWarning or not OWN_WARNING.search(str(w.message))]
    assert not foreign, [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in foreign]


@API
@given(batches, metas, st.sampled_from([PrelabelingEfficiency, PrelabelingEfficiencyMetric]))
def test_records(batch: tuple[Any, Any], meta: Any, metric_class: type[Any]) -> None:
    predictions, groundtruths = batch

    def add_then_compute() -> None:
        metric = metric_class(dataset_meta=meta)
        metric.add(predictions, groundtruths)
        metric.compute(**({"size": len(groundtruths)} if metric_class is PrelabelingEfficiencyMetric else {}))

    _holds(add_then_compute)


@API
@given(threshold, threshold, threshold, metas, st.one_of(st.none(), values))
def test_metric_arguments(iou_min: Any, iou_perfect: Any, confidence: Any, meta: Any, costs: Any) -> None:
    for metric_class in (PrelabelingEfficiency, PrelabelingEfficiencyMetric):
        _holds(lambda m=metric_class: m(iou_min, iou_perfect, confidence, costs, meta))


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@API
@given(
    st.one_of(values, st.just("")), st.one_of(values, st.just("")), st.sampled_from(["gt_layout", "pred_box"])
)
def test_public_functions(empty_store: Path, gt: Any, pred: Any, option: str) -> None:
    _holds(lambda: load_records(gt, pred, store=str(empty_store)))
    _holds(lambda: load_records("gt.json", "pred.json", store=str(empty_store), **{option: pred}))
    store = str(empty_store) if isinstance(gt, str) else gt  # a string would be a folder made here
    _holds(lambda: PrelabelingEfficiency().evaluate(gt, pred, store=store))
    _holds(lambda: load_outcomes(gt, store=str(empty_store)))
    _holds(lambda: compare(gt, pred, pred, inputs=gt if isinstance(gt, dict) else None, store=None))
