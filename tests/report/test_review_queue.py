"""The review queue: `review_queue.csv` (`show --queue`), the findings' `review_queue`, and how
both agree with the outcome lines, the time total and `images_with_most_work`."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.builders import annotation, asset, write_json

from handler.cli import main as cli_main
from handler.engine.review import MIN_BIN_PREDICTIONS, ReviewQueue, pooled_shares, uncertain_bins
from handler.engine.timecost import ACTIONS, TimeCosts
from handler.features.review.finisher import BLOCK_ROWS, COLUMNS, queue_csv
from handler.features.review.section import ConfidenceBin, ReviewQueueTotals
from handler.report.finishers import REPORT_PARTS

HOSTILE = "<img src=x onerror=alert(1)>"
QUOTED = "street \"quoted\", \\ 'id' é\n.jpg"
RIGHT_OUTCOMES = ("correct", "shifted")


def _box(rng: np.random.Generator) -> tuple[float, float, float, float]:
    x, y = rng.uniform(0, 80, 2)
    return float(x), float(y), float(x + rng.uniform(8, 20)), float(y + rng.uniform(8, 20))


def _prediction(rng: np.random.Generator, gt: tuple[str, float, float, float, float]) -> dict[str, Any]:
    """A prediction of one GT box: more often right the more confident (so bins differ)."""
    label, x0, y0, x1, y1 = gt
    confidence = float(rng.uniform(0.3, 1.0))
    roll = rng.uniform() < confidence
    if roll:  # right: on the box, now and then shifted
        shift = float(rng.choice([0.0, 0.0, 3.0]))
        return annotation((label, x0 + shift, y0, x1 + shift, y1), round(confidence, 3))
    if rng.uniform() < 0.3:  # the wrong class on the box
        return annotation(("dog" if label == "car" else "car", x0, y0, x1, y1), round(confidence, 3))
    return annotation(("car", 200.0, 200.0, 210.0, 210.0), round(confidence, 3))  # invented


def write_pair(tmp_path: Path, images: int = 150, seed: int = 3) -> tuple[Path, Path]:
    """A GT and predictions of `images` images (two of them with hostile ids), several boxes each."""
    rng = np.random.default_rng(seed)
    gt_assets, pred_assets = [], []
    for i in range(images):
        asset_id = HOSTILE if i == 7 else QUOTED if i == 11 else f"img_{i:04d}.jpg"
        boxes = [
            ("car" if rng.uniform() < 0.6 else "dog", *_box(rng)) for _ in range(int(rng.integers(0, 5)))
        ]
        predictions = [_prediction(rng, box) for box in boxes if rng.uniform() < 0.85]
        predictions += [annotation(("car", *_box(rng)), round(float(rng.uniform(0.3, 0.7)), 3))] * int(
            rng.integers(0, 2)
        )
        gt_assets.append(asset(asset_id, [annotation(box) for box in boxes]))
        pred_assets.append(asset(asset_id, predictions))
    return write_json(tmp_path / "gt.json", gt_assets), write_json(tmp_path / "pred.json", pred_assets)


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli_main([*args, "--store", str(tmp_path / "store")]) == 0
    return capsys.readouterr().out


@pytest.fixture
def reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """One real run through the CLI: its findings, `show --queue` rows, `show --outcomes` lines."""
    gt, pred = write_pair(tmp_path)
    findings = json.loads(_cli(tmp_path, capsys, str(gt), str(pred), "--json"))
    queue_text = _cli(tmp_path, capsys, "show", "latest", "--queue")
    outcomes = [
        json.loads(line) for line in _cli(tmp_path, capsys, "show", "latest", "--outcomes").splitlines()
    ]
    findings["sketches"] = json.loads(_cli(tmp_path, capsys, "show", "latest", "--sketches"))  # the page's
    return {"findings": findings, "queue_text": queue_text, "outcomes": outcomes}


def _rows(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    assert tuple(reader.fieldnames or ()) == COLUMNS
    return list(reader)


def test_the_queue_is_a_report_part() -> None:
    part = REPORT_PARTS["queue"]
    assert (part.name, part.content_type) == ("review_queue.csv", "text/csv")


def test_show_queue_parses_and_holds_every_image_most_seconds_first(reported: dict[str, Any]) -> None:
    rows, findings = _rows(reported["queue_text"]), reported["findings"]
    assert len(rows) == findings["dataset"]["images"] == findings["review_queue"]["images"] == 150
    assert [int(row["rank"]) for row in rows] == list(range(1, 151))
    assert {row["asset_id"] for row in rows} >= {HOSTILE, QUOTED}  # the csv quoting round-trips them
    seconds = [float(row["expected_seconds"]) for row in rows]
    assert seconds == sorted(seconds, reverse=True)
    # ties keep asset order (the order the GT lists its images)
    asset_order = {line["asset_id"]: i for i, line in enumerate(reported["outcomes"])}
    tied = [(s, asset_order.get(row["asset_id"], 10**9)) for s, row in zip(seconds, rows, strict=True)]
    assert tied == sorted(tied, key=lambda pair: (-pair[0], pair[1]))
    assert float(rows[-1]["cumulative_share"]) == 1.0


def test_each_row_is_its_ledger_rows_priced_and_they_add_up_to_the_time_total(
    reported: dict[str, Any],
) -> None:
    rows, findings = _rows(reported["queue_text"]), reported["findings"]
    # Count each image's actions from the ledger: a row per outcome (a matched pair is one).
    actions: dict[str, Counter[str]] = defaultdict(Counter)
    for line in reported["outcomes"]:
        actions[line["asset_id"]][line["action"]] += 1
    costs = TimeCosts()
    for row in rows:
        counted = {action: int(row[action]) for action in ACTIONS}
        assert counted == {action: actions[row["asset_id"]][action] for action in ACTIONS}
        priced = sum(count * getattr(costs, action) for action, count in counted.items())
        assert float(row["expected_seconds"]) == pytest.approx(priced, abs=5e-4)
    total = findings["time"]["with_predictions_seconds"]
    # each row is rounded to the millisecond: the rows add up to the total within 0.5 ms each
    assert abs(sum(float(row["expected_seconds"]) for row in rows) - total) <= 5e-4 * len(rows)


def test_the_first_rows_are_images_with_most_work(reported: dict[str, Any]) -> None:
    rows, findings = _rows(reported["queue_text"]), reported["findings"]
    listed = findings["images_with_most_work"]
    assert len(listed) == 10
    assert [(w["rank"], w["asset_id"], w["uncertain_boxes"]) for w in listed] == [
        (int(r["rank"]), r["asset_id"], int(r["uncertain_boxes"])) for r in rows[:10]
    ]
    assert [w["labeler_seconds"] for w in listed] == pytest.approx(
        [float(r["expected_seconds"]) for r in rows[:10]], abs=5e-4
    )
    assert findings["review_queue"]["listed_seconds"] == pytest.approx(
        sum(w["labeler_seconds"] for w in listed)
    )


def _isotonic(right: list[int], kept: list[int]) -> list[float | None]:
    """The isotonic (non-decreasing) fit of right/kept weighted by kept, by its closed form:
    max over lower ends of the min over upper ends of the pooled share (empty bins: None)."""
    full = [i for i, n in enumerate(kept) if n]
    fit: list[float | None] = [None] * len(kept)
    for p, i in enumerate(full):
        fit[i] = max(
            min(
                sum(right[full[a]] for a in range(j, k + 1)) / sum(kept[full[a]] for a in range(j, k + 1))
                for k in range(p, len(full))
            )
            for j in range(p + 1)
        )
    return fit


def test_uncertain_flags_match_their_definition_on_the_ledger(reported: dict[str, Any]) -> None:
    review = reported["findings"]["review_queue"]
    bins = review["confidence_bins"]
    lows = [b["low"] for b in bins]
    assert lows[0] == reported["findings"]["parameters"]["confidence_threshold"]
    # every kept prediction's bin, from its ledger row
    predictions = [line for line in reported["outcomes"] if line["pred_index"] is not None]
    bin_of = [int(np.searchsorted(lows, line["confidence"], side="right")) - 1 for line in predictions]
    kept = [bin_of.count(b) for b in range(len(bins))]
    right = [
        sum(
            1
            for line, b in zip(predictions, bin_of, strict=True)
            if b == k and line["outcome"] in RIGHT_OUTCOMES
        )
        for k in range(len(bins))
    ]
    assert [b["predictions"] for b in bins] == kept
    fit = _isotonic(right, kept)
    assert [b["pooled_right_share"] for b in bins] == pytest.approx(fit)
    low, high = review["uncertain_shares"]
    expected = [
        share is not None
        and low - 1e-12 <= share <= high + 1e-12
        and b["pooled_predictions"] >= MIN_BIN_PREDICTIONS
        for share, b in zip(fit, bins, strict=True)
    ]
    assert [b["uncertain"] for b in bins] == expected
    assert any(expected) and not all(expected)  # the data makes some bins uncertain, not all
    # each image's uncertain boxes: its predictions in an uncertain bin
    flagged: Counter[str] = Counter(
        line["asset_id"] for line, b in zip(predictions, bin_of, strict=True) if bins[b]["uncertain"]
    )
    rows = _rows(reported["queue_text"])
    assert {row["asset_id"]: int(row["uncertain_boxes"]) for row in rows} == {
        row["asset_id"]: flagged[row["asset_id"]] for row in rows
    }
    assert review["uncertain_boxes"] == sum(flagged.values()) > 0
    assert review["images_with_uncertain_boxes"] == len(flagged)


def test_the_run_s_costs_price_the_queue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one image with a box to draw, one with two invented boxes: drawing first by default (25.5 s
    # vs 2 x 2 s), deleting first once a delete costs 20 s
    gt = write_json(
        tmp_path / "gt.json",
        [asset("draw.jpg", [annotation(("car", 0, 0, 10, 10))]), asset("delete.jpg", [])],
    )
    invented = [annotation(("car", 0, 0, 10, 10), 0.9), annotation(("car", 50, 50, 60, 60), 0.9)]
    pred = write_json(tmp_path / "pred.json", [asset("draw.jpg", []), asset("delete.jpg", invented)])
    for extra, expected in (
        ((), [("draw.jpg", "25.5", "0"), ("delete.jpg", "4.0", "2")]),
        (("--seconds-delete", "20"), [("delete.jpg", "40.0", "2"), ("draw.jpg", "25.5", "0")]),
    ):
        report_id = json.loads(_cli(tmp_path, capsys, str(gt), str(pred), *extra, "--json"))["report_id"]
        rows = _rows(_cli(tmp_path, capsys, "show", report_id, "--queue"))
        assert [(row["asset_id"], row["expected_seconds"], row["delete"]) for row in rows] == expected


def test_pooled_shares_pool_adjacent_violators_only() -> None:
    # rising shares stay as they are; an empty bin stays empty
    right, kept = np.array([1, 0, 3, 8]), np.array([4, 0, 6, 10])
    assert [a.tolist() for a in pooled_shares(right, kept)] == [[1, 0, 3, 8], [4, 0, 6, 10]]
    # 1/6 after 3/6 falls: pooled, 4/12 = 1/3 still falls after 2/4: the three pooled, 6/16
    right, kept = np.array([2, 3, 1, 9]), np.array([4, 6, 6, 10])
    assert [a.tolist() for a in pooled_shares(right, kept)] == [[6, 6, 6, 9], [16, 16, 16, 10]]


def test_uncertain_bins_bounds_are_inclusive_and_need_enough_predictions() -> None:
    def bins(right: int, wrong: int) -> list[int]:  # one bin: correct vs false positive counts
        return [right, 0, 0, wrong, 0]

    # right shares 1/3 and 2/3 (the bounds are inclusive), 0.3 and 0.7 (outside), one bin at a time
    by_outcome = np.array([bins(10, 20), bins(20, 10), bins(9, 21), bins(21, 9)])
    assert [bool(uncertain_bins(by_outcome[i : i + 1])[0]) for i in range(4)] == [True, True, False, False]
    assert not uncertain_bins(np.array([bins(5, 5)]))[0]  # 1/2, but of 10 predictions only
    assert uncertain_bins(np.array([bins(10, 10)]))[0]  # 1/2 of 20


def _in_uncertain_bin(confidence: float, bins: list[dict[str, Any]]) -> bool:
    return any(
        b["uncertain"] and b["low"] <= confidence and (b["high"] is None or confidence < b["high"])
        for b in bins
    )


def test_the_sketches_flag_the_uncertain_predictions_the_queue_counts(reported: dict[str, Any]) -> None:
    findings = reported["findings"]
    bins = findings["review_queue"]["confidence_bins"]
    boxes = [box for sketch in findings["sketches"] for box in sketch["boxes"]]
    assert any(box["uncertain"] for box in boxes)
    for box in boxes:
        expected = box["side"] == "pred" and _in_uncertain_bin(box["confidence"], bins)
        assert box["uncertain"] == expected
        assert (box["confidence"] is None) == (box["side"] == "gt")
    by_image = {
        sketch["asset_id"]: sum(b["uncertain"] for b in sketch["boxes"]) for sketch in findings["sketches"]
    }
    for row in findings["images_with_most_work"]:  # every box drawn: the flags are the row's count
        assert by_image[row["asset_id"]] == row["uncertain_boxes"]


def test_the_uncertain_text_names_the_spans_of_adjacent_uncertain_bins() -> None:
    def totals(flags: list[bool]) -> ReviewQueueTotals:
        lows = [0.5 + 0.05 * i for i in range(len(flags))]
        bins = [
            ConfidenceBin(
                low=round(low, 2),
                high=round(low + 0.05, 2) if i < len(flags) - 1 else None,
                predictions=30,
                pooled_right_share=0.5,
                pooled_predictions=30,
                uncertain=flag,
            )
            for i, (low, flag) in enumerate(zip(lows, flags, strict=True))
        ]
        return ReviewQueueTotals(
            part="review_queue.csv",
            images=1,
            listed_seconds=1.0,
            uncertain_boxes=3,
            images_with_uncertain_boxes=2,
            uncertain_shares=(1 / 3, 2 / 3),
            min_bin_predictions=20,
            confidence_bins=tuple(bins),
        )

    assert totals([False, True, True, False, True]).uncertain_text() == (
        "Uncertain: kept predictions with confidence 0.55 to 0.65, 0.70 and up, "
        "where this run's predictions are right 33 to 67 % of the time (3 boxes on 2 images)."
    )
    assert totals([False, False]).uncertain_text().startswith("No prediction is uncertain: at no confidence")


@pytest.mark.parametrize(
    "asset_ids",
    [["a.jpg", "b.jpg"], ["plain.jpg", 'x,"y"\r\n.jpg'], ["nul\x00inside.jpg", "é.jpg"], [HOSTILE, QUOTED]],
)
def test_queue_csv_quotes_only_what_needs_it_and_reads_back(asset_ids: list[str]) -> None:
    n = len(asset_ids)
    queue = ReviewQueue(
        asset_ids=asset_ids,
        counts=np.array([[1, 0, 0, 0, 1], [0, 2, 0, 0, 0]][:n]),
        seconds=np.array([27.3, 12.0][:n]),
        uncertain=np.array([1, 0][:n]),
        order=np.array([0, 1][:n]),
        edges=np.array([0.5]),
        by_outcome=np.zeros((1, 5), dtype=np.int64),
        uncertain_bin=np.array([False]),
    )
    text = queue_csv(queue).decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == list(COLUMNS)
    assert rows[1:] == [
        ["1", asset_ids[0], "27.3", "0.6947", "1", "1", "0", "0", "0", "1"],
        ["2", asset_ids[1], "12.0", "1.0", "0", "0", "2", "0", "0", "0"],
    ]
    plain = all(not any(c in i for c in '",\r\n\x00') for i in asset_ids)
    assert ('"' not in text) == plain  # nothing is quoted that need not be


def test_an_empty_run_s_queue_is_its_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a.jpg", [annotation(("car", 0, 0, 10, 10))])])
    pred = write_json(tmp_path / "pred.json", [asset("other.jpg", [annotation(("car", 0, 0, 10, 10), 0.9)])])
    report_id = json.loads(_cli(tmp_path, capsys, str(gt), str(pred), "--json"))["report_id"]
    assert _rows(_cli(tmp_path, capsys, "show", report_id, "--queue")) == []


def test_a_queue_longer_than_a_block_is_written_whole_in_its_order() -> None:
    n = 2 * BLOCK_ROWS + 7  # three blocks, the last short
    rng = np.random.default_rng(3)
    asset_ids = [f"img_{i}.jpg" if i % 5 else f'q,"{i}".jpg' for i in range(n)]
    queue = ReviewQueue(
        asset_ids=asset_ids,
        counts=rng.integers(0, 9, size=(n, 5)),
        seconds=rng.uniform(0, 60, size=n).round(2),
        uncertain=rng.integers(0, 3, size=n),
        order=rng.permutation(n),
        edges=np.array([0.5]),
        by_outcome=np.zeros((1, 5), dtype=np.int64),
        uncertain_bin=np.array([False]),
    )
    rows = list(csv.reader(io.StringIO(queue_csv(queue).decode("utf-8"), newline="")))
    order = queue.order.tolist()
    assert len(rows) == n + 1
    assert [int(row[0]) for row in rows[1:]] == list(range(1, n + 1))
    assert [row[1] for row in rows[1:]] == [asset_ids[i] for i in order]
    assert [float(row[2]) for row in rows[1:]] == [round(float(queue.seconds[i]), 3) for i in order]
    assert [row[4:] for row in rows[1:]] == [
        [str(queue.uncertain[i]), *map(str, queue.counts[i].tolist())] for i in order
    ]
    assert float(rows[-1][3]) == 1.0
