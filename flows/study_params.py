"""The validated parameters of the study flow (flows/study.py): its splits, solvers, arms and seeds, and
the sections of ``LoopParams`` (train, augment, loop) every cell shares, embedded rather than declared
again. Free of Prefect and MLflow, like flows/params.py: the command line reads these fields for its
options."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from flows.params import AugmentSettings, DataSource, LoopParams, LoopSettings, SolverSettings, Strict, \
    TrainSettings, lift_legacy_loop_keys
from tasks.study.arms import ARMS
from tasks.study.grid import Cell, expand

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # a directory and MLflow name: no path separators


class SplitSpec(Strict):
    name: str = Field(pattern=NAME_PATTERN, description="the split's name in the report: iid, comdiv, sd, ...")
    data: DataSource = Field(default_factory=DataSource)
    split_file: Optional[Path] = Field(None, description="from `compaug split`/`compaug sd`; none: a seeded random split")


class StudyParams(Strict):
    name: str = Field("study", pattern=NAME_PATTERN, description="the study's directory and MLflow experiment")
    splits: list[SplitSpec] = Field(default_factory=lambda: [SplitSpec(name="iid")], min_length=1)
    solvers: list[SolverSettings] = Field(default_factory=lambda: [SolverSettings()], min_length=1)
    train: TrainSettings = Field(default_factory=TrainSettings)
    augment: AugmentSettings = Field(default_factory=AugmentSettings)
    arms: list[Literal[tuple(ARMS)]] = Field(default_factory=lambda: ["control", "loop"], min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    loop: LoopSettings = Field(default_factory=LoopSettings, description="the loop settings of every arm, which "
                               "each arm's record changes (tasks/study/arms.py); the report reads round T; "
                               "warm_start_epochs applies to the arms that warm-start")
    iid_holdout_fraction: float = Field(0.0, ge=0, lt=1)
    out_dir: Path = Field(Path("runs/studies"))
    tracking_uri: Optional[str] = None
    workers: int = Field(1, ge=1, le=256, description="cells in parallel on a Dask LocalCluster of this many worker "
                                                    "processes (1: one after another in this process)")
    dask_address: Optional[str] = Field(None, description="an existing Dask scheduler (tcp://HOST:PORT) instead")
    torch_threads: Optional[int] = Field(None, ge=1, description="torch threads of each cell (default: cores / "
                                         "workers); the same value gives the same numbers, sequential or parallel")
    share_round_zero: bool = Field(True, description="the arms of a seed adopt the round 0 its first arm trained "
                                   "(every parameter round 0 depends on is equal) instead of training it again")

    @model_validator(mode="before")
    @classmethod
    def _legacy_loop_keys(cls, values: Any) -> Any:
        return lift_legacy_loop_keys(values)  # study files written before the loop section (docs/studies/)

    @model_validator(mode="after")
    def _names_and_files(self) -> "StudyParams":
        if self.loop.rounds < 1:
            raise ValueError(f"loop.rounds: a study's loop arms need at least one round, got {self.loop.rounds}")
        for kind, names in (("split", [s.name for s in self.splits]), ("solver", [s.name for s in self.solvers])):
            if len(set(names)) != len(names):
                raise ValueError(f"each {kind} may appear once in a study, got {names}")
        for spec in self.splits:
            if spec.split_file is not None and not spec.split_file.is_file():
                raise ValueError(f"split {spec.name!r}: split file {spec.split_file} does not exist")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds repeat: {self.seeds}")
        return self

    def directory(self) -> Path:
        return self.out_dir / self.name

    def cells(self) -> list[Cell]:
        return expand([s.name for s in self.solvers], [s.name for s in self.splits], self.arms, self.seeds)

    def tracking(self) -> str:
        return LoopParams(out_dir=self.directory(), tracking_uri=self.tracking_uri).tracking()

    def cell_threads(self) -> int:
        """Torch threads of each cell: ``torch_threads``, else the cores shared by the workers."""
        return self.torch_threads or max(1, (os.cpu_count() or 1) // self.workers)

    def round_zero_source(self, cell: Cell) -> Cell | None:
        """The cell whose round 0 ``cell`` adopts: the first cell of its solver, split and seed in grid order
        among the arms without a budget (the control trains its own epochs), when it is not ``cell``."""
        if not self.share_round_zero or ARMS[cell.arm].budget is not None:
            return None
        first = next(c for c in self.cells() if (c.solver, c.split, c.seed) == (cell.solver, cell.split, cell.seed)
                     and ARMS[c.arm].budget is None)
        return None if first == cell else first

    def loop_params(self, cell: Cell, epochs: int | None = None, parent_run_id: str | None = None) -> LoopParams:
        """The loop run of one cell: the study's settings changed by the arm's record, the cell's seed;
        ``epochs``, the budget of an arm whose training matches another arm's updates; ``round0_from``, the
        run directory of its :meth:`round_zero_source`."""
        source = self.round_zero_source(cell)
        try:
            round0_from = self.loop_params(source).run_dir() if source is not None else None
        except ValueError:  # the source's own parameters do not validate: it fails alone, this cell trains round 0
            round0_from = None
        split = next(s for s in self.splits if s.name == cell.split)
        solver = next(s for s in self.solvers if s.name == cell.solver)
        arm = ARMS[cell.arm]
        augment = self.augment.model_dump()
        augment["operators"] = [op for op in augment["operators"] if op not in arm.drop_operators]
        if not augment["operators"]:
            raise ValueError(f"cell {cell.key}: arm {cell.arm} leaves no operator")
        train = self.train.model_dump() | dict(arm.train) | ({"epochs": epochs} if epochs else {})
        # a study has its own control arm (budget matched per seed): its cells train no control of their own
        loop = self.loop.model_dump() | dict(arm.loop) | {"control": False}
        if not loop["warm_start"]:  # only the warm-starting arms train rounds 1..T for warm_start_epochs
            loop["warm_start_epochs"] = None
        return LoopParams.model_validate({
            "data": split.data.model_dump(), "split_file": split.split_file, "solver": solver.model_dump(),
            "train": train, "augment": augment, "loop": loop, "iid_holdout_fraction": self.iid_holdout_fraction,
            "seed": cell.seed, "out_dir": self.directory() / "cells" / cell.key,
            "experiment": f"compaug-study-{self.name}", "tracking_uri": self.tracking(),
            "mlflow_parent_run_id": parent_run_id, "round0_from": round0_from})
