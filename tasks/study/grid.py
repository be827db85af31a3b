"""The grid of a study: solvers x splits x arms x seeds, each cell one loop run in its own directory.

Arms (paper 003 Table 5 and the controls a sceptic asks for):

- ``loop``: the loop with the study's settings (paper defaults unless changed), read at round T;
- ``control``: no augmentation (round 0 only), trained with as many optimizer updates as the loop's final
  round: epochs x (final pool / original pool), best epoch on validation, so "more data" is not confused
  with "more gradient steps";
- ``random-ranker``: random retention at the same kept count (the "- DataRanker" ablation);
- ``no-op1`` / ``no-op2``: the loop without operation 1 / 2;
- ``per-operator``: the loop keeping the top fraction of each operator (retention ``per-operator``);
- ``per-origin``: the loop keeping as many as the top fraction, at most one per original problem a round
  (retention ``per-origin``), against the confidence ranker's renamings of a few easy problems;
- ``warm-start``: the loop with rounds 1..T trained from the previous round's weights (for the study's
  ``warm_start_epochs``, default its epochs) instead of from scratch: the fast mode to compare with ``loop``;
- ``warm-control``: the warm-start arm's trainings with nothing added (rounds 1..T continue on the
  original pool): the same updates and learning-rate restarts as ``warm-start``, so that warm-start -
  warm-control is what the added problems do in the fast mode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

# arm -> overrides of the loop parameters (applied to a copy of the study's loop settings)
ARMS: dict[str, dict[str, Any]] = {
    "loop": {},
    "control": {"rounds": 0},
    "random-ranker": {"score": "random"},
    "no-op1": {"drop_operator": "geca_op1"},
    "no-op2": {"drop_operator": "geca_op2"},
    "per-operator": {"retention": "per-operator"},
    "per-origin": {"retention": "per-origin"},
    "warm-start": {"warm_start": True},
    "warm-control": {"warm_start": True, "augment_rounds": False},
}


@dataclass(frozen=True)
class Cell:
    solver: str
    split: str
    arm: str
    seed: int

    @property
    def key(self) -> str:
        """A name safe as a directory and an MLflow run name."""
        return f"{self.solver}-{self.split}-{self.arm}-s{self.seed}"


def expand(solvers: Sequence[str], splits: Sequence[str], arms: Sequence[str], seeds: Sequence[int]) -> list[Cell]:
    """Every cell; loop-like arms before ``control``, whose budget is read from the finished loop cell."""
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {', '.join(unknown)}; known: {', '.join(ARMS)}")
    order = sorted(arms, key=lambda a: a == "control")
    return [Cell(solver, split, arm, seed) for solver in solvers for split in splits for seed in seeds
            for arm in order]


def control_epochs(epochs: int, original_pool: int | None, final_pool: int | None) -> int:
    """Epochs that give the control as many optimizer updates as the loop's final round had:
    epochs x final pool / original pool, rounded up; the loop's own epochs when it did not run."""
    if not original_pool or not final_pool:
        return epochs
    return max(epochs, math.ceil(epochs * final_pool / original_pool))
