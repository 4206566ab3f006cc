"""bench/RESULTS.md from the raw measurements: medians, our ratios to each peer, the targets."""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.estimate import ShardCost, estimate_lines
from bench.tools import BEFORE, OURS
from bench.workloads import WORKLOADS


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
    return {tool: summarise(runs) for tool, runs in entry.get("runs", {}).items()}


@dataclass(frozen=True)
class Target:
    name: str
    measured: float | None
    bound: float
    detail: str
    at_least: bool = False  # a lower bound (a speed-up), not an upper one

    def row(self) -> str:
        sign = "≥" if self.at_least else "≤"
        if self.measured is None:
            return f"| {self.name} | not measured | {sign} {self.bound:g} | — |"
        met = self.measured >= self.bound if self.at_least else self.measured <= self.bound
        verdict = "**met**" if met else "**missed**"
        return f"| {self.name} | {self.measured:.3g} ({self.detail}) | {sign} {self.bound:g} | {verdict} |"


def _ratio(raw: dict[str, Any], workload: str, tool: str, field: str, ours: str = OURS) -> float | None:
    """`ours`' median field / `tool`'s, in the same run of the workload."""
    summaries = _summaries(raw["workloads"].get(workload, {}))
    mine, other = summaries.get(ours), summaries.get(tool)
    if mine is None or other is None:
        return None
    value: float = getattr(mine, field) / getattr(other, field)
    return value


def _to_best_peer(raw: dict[str, Any], workload: str, field: str) -> tuple[float | None, str]:
    """Our median `field` / the best (lowest) peer's on `workload`, and that peer's name."""
    summaries = _summaries(raw["workloads"].get(workload, {}))
    mine = summaries.get(OURS)
    peers = {
        tool: summary
        for tool, summary in summaries.items()
        if tool in WORKLOADS[workload].peers and summary is not None
    }
    if mine is None or not peers:
        return None, "no peer measured"
    best = min(peers, key=lambda tool: getattr(peers[tool], field))
    value: float = getattr(mine, field) / getattr(peers[best], field)
    return value, best


def _across(raw: dict[str, Any], larger: str, smaller: str, field: str) -> float | None:
    """Our median field on one workload / on another."""
    big, small = (_summaries(raw["workloads"].get(w, {})).get(OURS) for w in (larger, smaller))
    if big is None or small is None:
        return None
    value: float = getattr(big, field) / getattr(small, field)
    return value


def _sweep(raw: dict[str, Any]) -> float | None:
    sweep = raw["workloads"].get("default", {}).get("sweep", {})
    if "sweep" not in sweep:
        return None
    value: float = sweep["sweep"] / (sweep["candidate_pairs"] + sweep["evaluation"])
    return value


def _jsonl_scaling(raw: dict[str, Any]) -> list[Target]:
    """JSONL shards 10k -> 100k images: memory flat, time about linear ."""
    return [
        Target(
            "JSONL shards: our peak RSS 100k / 10k images",
            _across(raw, "jsonl-100k", "jsonl-10k", "rss"),
            1.3,
            "RSS factor for 10x images",
        ),
        Target(
            "JSONL shards: our wall 100k / 10k images",
            _across(raw, "jsonl-100k", "jsonl-10k", "wall"),
            11,
            "time factor for 10x images",
        ),
    ]


def _against_best_peers(raw: dict[str, Any], bounds: tuple[float, float, float, float]) -> list[Target]:
    """The fastest peer on wall time, the leanest on peak RSS, each chosen in the same run;
    `bounds`: 5k's wall ratio and its stretch, 50k's and its stretch."""
    five, five_stretch, fifty, fifty_stretch = bounds
    rows = [
        ("5k (default): our wall / the fastest peer's", "default", "wall", five),
        ("5k (default): our wall / the fastest peer's (stretch)", "default", "wall", five_stretch),
        ("50k (big): our wall / the fastest peer's", "big", "wall", fifty),
        ("50k (big): our wall / the fastest peer's (stretch)", "big", "wall", fifty_stretch),
        ("50k (big): our peak RSS / the leanest peer's", "big", "rss", 0.5),
    ]
    targets = []
    for name, workload, field, bound in rows:
        value, peer = _to_best_peer(raw, workload, field)
        targets.append(Target(name, value, bound, f"{field} ratio to {peer}"))
    return [*targets, *_jsonl_scaling(raw)]


def _huge_completed(raw: dict[str, Any]) -> Target:
    huge = raw.get("huge")
    name = "huge: 100M predictions complete (bench/huge.py)"
    if huge is None:
        return Target(name, None, 1, "", at_least=True)
    done = huge["returncode"] == 0
    detail = "completed" if done else f"exit {huge['returncode']} after {huge['wall']:.0f} s"
    return Target(name, 1.0 if done else 0.0, 1, detail, at_least=True)


def targets(raw: dict[str, Any]) -> list[Target]:
    """The bounds the node is held to: against the fastest and leanest peers (5k's wall and its
    stretch, 50k's and its stretch), the JSONL shards' scaling, the huge run, the sweep's cost."""
    return [
        *_against_best_peers(raw, (1.5, 1.2, 0.9, 0.8)),
        _huge_completed(raw),
        Target(
            "scaling: our wall big (50k images) / default (5k)",
            _across(raw, "big", "default", "wall"),
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
    if "skipped" in entry:
        return [f"Skipped: {entry['skipped']}."]
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
    rows = []
    for key, whose in (("phases", "Our phases"), ("phases_before", f"The phases of {BEFORE}")):
        phases = entry.get(key, {})
        cells = " · ".join(f"{name} {statistics.median(values):.2f}" for name, values in phases.items())
        rows += ["", f"{whose} (median s, from the node's stderr): {cells}."] if phases else []
    return rows


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


def _portable(command: str) -> str:
    """The command as anyone could run it: the options naming this machine's paths left out."""
    return re.sub(r" --[\w-]+ /\S+", "", command)


def _workload_section(name: str, entry: dict[str, Any]) -> list[str]:
    workload = WORKLOADS[name]
    made = f" as JSONL shards x{workload.tiles}" if workload.tiles else ""
    boxes = (
        f" {entry['boxes']['gt']:,} GT and {entry['boxes']['pred']:,} predicted boxes."
        if "boxes" in entry
        else ""
    )
    head = [
        f"### {name}",
        "",
        f"`gen_workload.py {' '.join(workload.generator_args)}`{made}, "
        f"CONFIDENCE_THRESHOLD {workload.confidence_threshold} — {workload.note}. "
        f"Measured {entry['machine']['date']}, load average at start "
        f"{entry['machine']['load average at start']}.{boxes}",
        "",
        *([f"Command: `{_portable(entry['invocation'])}`.", ""] if "invocation" in entry else []),
    ]
    return head + _tool_rows(entry) + _phase_rows(entry) + _extras(entry) + [""]


def _machine_lines(raw: dict[str, Any]) -> list[str]:
    measured = [entry["machine"] for entry in raw["workloads"].values()] + [
        raw.get("huge", {}).get("machine")
    ]
    first: dict[str, str] | None = next(filter(None, measured), None)
    if first is None:
        return ["- nothing measured yet"]
    keys = ("cpu", "cores", "ram", "os", "python", "numpy", "orjson", "msgspec")
    lines = [f"- {key}: {first[key]}" for key in keys]
    peers = raw.get("peer_versions", {})
    lines.append("- peers (own venv): " + ", ".join(f"{k} {v}" for k, v in peers.items()))
    return lines


def _huge_lines(raw: dict[str, Any]) -> list[str]:
    huge = raw.get("huge")
    if huge is None:
        return ["Not run yet: `python bench/huge.py` (about 11 GB under bench/.work/huge)."]
    phases = " · ".join(f"{k} {v:.1f}" for k, v in huge["phases"].items()) or "none finished"
    outcome = "completed" if huge["returncode"] == 0 else f"**did not complete**: exit {huge['returncode']}"
    killed = huge["returncode"] != 0 and huge["wall"] >= huge["timeout"]
    machine = huge["machine"]
    return [
        f"Measured {machine['date']}, load average at start {machine['load average at start']}. "
        f"{huge['assets']:,} assets, {huge['gt_boxes']:,} GT and {huge['pred_boxes']:,} predicted boxes, "
        f"{huge['bytes'] / 1e9:.1f} GB of JSONL shards (generated in {huge['generate_seconds']} s, "
        "shard by shard).",
        "",
        f"Our node: {outcome}{' (killed at the timeout)' if killed else ''}; wall {huge['wall']:.0f} s, "
        f"CPU {huge['cpu']:.0f} s, peak RSS {huge['peak_rss_mb']:.0f} MB (address space capped at "
        f"{huge['memory_limit_gb']:g} GB). Phases finished (s): {phases}.",
        "",
        "Last lines of its output: " + " / ".join(f"`{line}`" for line in huge["last_lines"]),
    ]


def _shard_cost(raw: dict[str, Any]) -> ShardCost | None:
    """One shard's cost from the 10k-image JSONL run: its wall over its shards, its whole peak RSS
    (start-up included, and today's node holds every shard: both are upper bounds)."""
    entry = raw["workloads"].get("jsonl-10k", {})
    ours = _summaries(entry).get(OURS)
    if ours is None or "boxes" not in entry:
        return None
    shards = entry["boxes"]["shards"]
    boxes = (entry["boxes"]["gt"] + entry["boxes"]["pred"]) / shards
    return ShardCost(
        ours.wall / shards,
        ours.rss,
        boxes,
        f"jsonl-10k: its run / {shards} shard pairs, start-up and report included, and today's node holds "
        "every shard: both upper bounds",
    )


def _estimate(raw: dict[str, Any]) -> list[str]:
    cost = _shard_cost(raw)
    if cost is None:
        return ["No jsonl-10k measurement to estimate from."]
    return estimate_lines(cost)


def _notes(path: Path) -> list[str]:
    """The hand-written analysis of the misses (bench/NOTES.md), kept under the generated part."""
    return ["", path.read_text().rstrip()] if path.exists() else []


def write_results(raw: dict[str, Any], output: Path) -> None:
    order: Callable[[str], int] = list(WORKLOADS).index
    sections = [
        line
        for name in sorted(raw["workloads"], key=order)
        for line in _workload_section(name, raw["workloads"][name])
    ]
    lines = [
        "# Benchmark results",
        "",
        "Written by `python bench/run.py` runs; each workload's section names the command that measured it.",
        "Each tool runs as a whole process (loading both JSON files included), alternating, the",
        "order rotated each round; medians of the runs. Peak RSS is the process's own (`wait4`).",
        "",
        "## Machine",
        "",
        *_machine_lines(raw),
        "",
        "## Targets",
        "",
        "| target | measured | bound | |",
        "|---|---|---|---|",
        *(t.row() for t in targets(raw)),
        "",
        "## Workloads",
        "",
        *sections,
        "## Huge: 10M GT / 100M predictions (`python bench/huge.py`)",
        "",
        *_huge_lines(raw),
        "",
        "## Estimate: 1B boxes on N Dask workers (paper, `bench/estimate.py`)",
        "",
        *_estimate(raw),
        *_notes(output.with_name("NOTES.md")),
    ]
    output.write_text("\n".join(lines).rstrip() + "\n")
