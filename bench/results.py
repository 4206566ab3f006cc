"""bench/RESULTS.md from the raw measurements: medians, our ratios to each peer, the targets."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.tools import FLOOR_ORJSON, FLOOR_OURS, OURS
from bench.workloads import WORKLOADS

FCE = "faster-coco-eval"


@dataclass(frozen=True)
class Summary:
    """Medians of one tool's runs on one workload."""

    wall: float
    cpu: float
    rss: float
    runs: int
    failed: int


def summarise(runs: list[dict[str, Any]]) -> Summary | None:
    good = [r for r in runs if r["returncode"] == 0]
    if not good:
        return None
    return Summary(
        statistics.median(r["wall"] for r in good),
        statistics.median(r["cpu"] for r in good),
        statistics.median(r["peak_rss_mb"] for r in good),
        len(good),
        len(runs) - len(good),
    )


def _summaries(entry: dict[str, Any]) -> dict[str, Summary | None]:
    return {tool: summarise(runs) for tool, runs in entry["runs"].items()}


@dataclass(frozen=True)
class Target:
    name: str
    measured: float | None
    bound: float
    detail: str

    def row(self) -> str:
        if self.measured is None:
            return f"| {self.name} | not measured | ≤ {self.bound:g} | — |"
        met = "**met**" if self.measured <= self.bound else "**missed**"
        return f"| {self.name} | {self.measured:.3g} ({self.detail}) | ≤ {self.bound:g} | {met} |"


def _ratio(raw: dict[str, Any], workload: str, tool: str, field: str) -> float | None:
    entry = raw["workloads"].get(workload)
    if entry is None:
        return None
    summaries = _summaries(entry)
    ours, other = summaries.get(OURS), summaries.get(tool)
    if ours is None or other is None:
        return None
    value: float = getattr(ours, field) / getattr(other, field)
    return value


def _scaling(raw: dict[str, Any]) -> float | None:
    small, big = (raw["workloads"].get(w) for w in ("default", "big"))
    if small is None or big is None:
        return None
    ours_small, ours_big = _summaries(small).get(OURS), _summaries(big).get(OURS)
    if ours_small is None or ours_big is None:
        return None
    return ours_big.wall / ours_small.wall


def _sweep(raw: dict[str, Any]) -> float | None:
    sweep = raw["workloads"].get("default", {}).get("sweep", {})
    if "sweep" not in sweep:
        return None
    value: float = sweep["sweep"] / (sweep["candidate_pairs"] + sweep["evaluation"])
    return value


def targets(raw: dict[str, Any]) -> list[Target]:
    return [
        Target(
            "default: our wall / faster-coco-eval's", _ratio(raw, "default", FCE, "wall"), 0.1, "wall ratio"
        ),
        Target(
            "default: our wall / parse floor (our parsers)",
            _ratio(raw, "default", FLOOR_OURS, "wall"),
            2,
            "wall ratio",
        ),
        Target(
            "default: our wall / parse floor (orjson.loads)",
            _ratio(raw, "default", FLOOR_ORJSON, "wall"),
            2,
            "wall ratio",
        ),
        Target("dense: our wall / faster-coco-eval's", _ratio(raw, "dense", FCE, "wall"), 0.3, "wall ratio"),
        Target("big: our peak RSS / faster-coco-eval's", _ratio(raw, "big", FCE, "rss"), 0.2, "RSS ratio"),
        Target(
            "scaling: our wall big (50k images) / default (5k)",
            _scaling(raw),
            11,
            "time factor for 10x images",
        ),
        Target("sweep / one evaluation (default, in-process)", _sweep(raw), 1, "time ratio"),
    ]


def _fmt(value: float | None, digits: str = ".2f") -> str:
    return "—" if value is None else format(value, digits)


def _of(ours: Summary | None, other: Summary, field: str) -> float | None:
    """ours.field / other.field, None for our own row."""
    if ours is None or ours is other:
        return None
    value: float = getattr(ours, field) / getattr(other, field)
    return value


def _tool_rows(entry: dict[str, Any]) -> list[str]:
    summaries = _summaries(entry)
    ours = summaries.get(OURS)
    rows = [
        "| tool | wall s | CPU s | peak RSS MB | runs | ours / tool: wall | CPU | RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tool, summary in summaries.items():
        if summary is None:
            rows.append(f"| {tool} | failed | | | 0 | | | |")
            continue
        ratios = " | ".join(_fmt(_of(ours, summary, field), ".3f") for field in ("wall", "cpu", "rss"))
        failed = f" ({summary.failed} failed)" if summary.failed else ""
        rows.append(
            f"| {tool} | {summary.wall:.2f} | {summary.cpu:.2f} | {summary.rss:.0f} | {summary.runs}{failed} "
            f"| {ratios} |"
        )
    return rows


def _phase_rows(entry: dict[str, Any]) -> list[str]:
    phases = entry.get("phases", {})
    if not phases:
        return []
    cells = " · ".join(f"{name} {statistics.median(values):.2f}" for name, values in phases.items())
    return ["", f"Our phases (median s, from the node's stderr): {cells}."]


def _memory_line(entry: dict[str, Any]) -> list[str]:
    peaks = entry.get("memory", {})
    if not peaks or "error" in peaks:
        return []
    cells = " · ".join(f"{name} {peak:.0f}" for name, peak in peaks.items())
    return [f"Our peak RSS by the end of each phase (MB, one in-process run): {cells}."]


def _extras(entry: dict[str, Any]) -> list[str]:
    lines = _memory_line(entry)
    sweep = entry.get("sweep")
    if sweep and "sweep" in sweep:
        lines.append(
            f"In-process (median): candidate pairs {sweep['candidate_pairs']:.3f} s "
            f"({sweep['pairs']:.0f} pairs), evaluation {sweep['evaluation']:.3f} s, "
            f"confidence sweep {sweep['sweep']:.3f} s."
        )
    verify = entry.get("verify")
    if verify:
        verdict = "equal" if verify.get("equal") else f"**NOT equal** {verify}"
        lines.append(f"Engine vs `tests/helpers/reference.py` on the whole workload: {verdict}.")
    return ["", *lines] if lines else []


def _workload_section(name: str, entry: dict[str, Any]) -> list[str]:
    workload = WORKLOADS[name]
    head = [
        f"### {name}",
        "",
        f"`gen_workload.py {' '.join(workload.generator_args)}`, "
        f"CONFIDENCE_THRESHOLD {workload.confidence_threshold} — {workload.note}. "
        f"Measured {entry['machine']['date']}, load average at start "
        f"{entry['machine']['load average at start']}.",
        "",
    ]
    return head + _tool_rows(entry) + _phase_rows(entry) + _extras(entry) + [""]


def _machine_lines(raw: dict[str, Any]) -> list[str]:
    first: dict[str, str] = next(iter(raw["workloads"].values()))["machine"]
    keys = ("cpu", "cores", "ram", "os", "python", "numpy", "orjson", "msgspec")
    lines = [f"- {key}: {first[key]}" for key in keys]
    peers = raw.get("peer_versions", {})
    lines.append("- peers (own venv): " + ", ".join(f"{k} {v}" for k, v in peers.items()))
    return lines


def _notes(path: Path) -> list[str]:
    """The hand-written analysis of the misses (bench/NOTES.md), kept under the generated part."""
    return ["", path.read_text().rstrip()] if path.exists() else []


def write_results(raw: dict[str, Any], output: Path, invocation: str) -> None:
    order: Callable[[str], int] = list(WORKLOADS).index
    sections = [
        line
        for name in sorted(raw["workloads"], key=order)
        for line in _workload_section(name, raw["workloads"][name])
    ]
    lines = [
        "# Benchmark results",
        "",
        f"Written by `{' '.join(['python bench/run.py', invocation]).strip()}`.",
        "Each tool runs as a whole process (loading both JSON files included), alternating, the",
        "order rotated each round; medians of the runs. Peak RSS is the process's own (`wait4`).",
        "",
        "## Machine",
        "",
        *_machine_lines(raw),
        "",
        "## Targets (issue 6)",
        "",
        "| target | measured | bound | |",
        "|---|---|---|---|",
        *(t.row() for t in targets(raw)),
        "",
        "## Workloads",
        "",
        *sections,
        *_notes(output.with_name("NOTES.md")),
    ]
    output.write_text("\n".join(lines).rstrip() + "\n")
