"""Each phase's garbage collections skip the objects made before it, and only while the run lasts."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from helpers.paths import EXAMPLES

from handler.inputs import parse_inputs
from handler.pipeline import PHASES, run
from handler.storage.local import LocalStore


class FrozenAtEachPhase:
    """A PhaseLog that notes how many objects the collector skips when each phase starts."""

    def __init__(self) -> None:
        self.frozen: dict[str, int] = {}

    def start(self, phase: str) -> None:
        self.frozen[phase] = gc.get_freeze_count()

    def __call__(self, phase: str, seconds: float) -> None:
        pass


@pytest.fixture
def example_run(tmp_path: Path) -> tuple[FrozenAtEachPhase, LocalStore]:
    return FrozenAtEachPhase(), LocalStore(tmp_path / "store")


def _run(watcher: FrozenAtEachPhase, store: LocalStore) -> None:
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    run(inputs, store, log=watcher)


def test_each_phase_skips_older_objects_then_they_are_collected_again(
    example_run: tuple[FrozenAtEachPhase, LocalStore],
) -> None:
    watcher, store = example_run
    _run(watcher, store)
    read, score, draw, build, publish = (watcher.frozen[phase] for phase in PHASES)
    # a phase settles what the ones before made; the run lets the datasets go once the images are
    # drawn, so the report's phase may start with fewer
    assert 0 < read < score < draw and build > 0 and publish > 0
    assert gc.get_freeze_count() == 0


def test_objects_a_caller_froze_stay_frozen(example_run: tuple[FrozenAtEachPhase, LocalStore]) -> None:
    watcher, store = example_run
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _run(watcher, store)
        # neither frozen again (the run's objects would join) nor unfrozen; some may have been freed
        assert 0 < watcher.frozen["build report"] <= frozen
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
