"""The grid of a study: solvers x splits x arms x seeds, each cell one loop run in its own directory.
The arms are the records of tasks/study/arms.py."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from tasks.study.arms import ARMS


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
    """Every cell; the arms whose budget is read from another arm's finished cell (the control) last."""
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {', '.join(unknown)}; known: {', '.join(ARMS)}")
    order = sorted(arms, key=lambda a: ARMS[a].budget is not None)
    return [Cell(solver, split, arm, seed) for solver in solvers for split in splits for seed in seeds
            for arm in order]


def control_epochs(epochs: int, original_pool: int | None, final_pool: int | None) -> int:
    """Epochs that give the control as many optimizer updates as the loop's final round had:
    epochs x final pool / original pool, rounded up; the loop's own epochs when it did not run."""
    if not original_pool or not final_pool:
        return epochs
    return max(epochs, math.ceil(epochs * final_pool / original_pool))
