"""What a study will cost before it runs (``compaug study --dry-run``).

Two costs are measured per solver on the study's data, with the torch threads a cell will have: a
training pass per problem and epoch (the second of two epochs on a sample, so start-up is not counted)
and a beam-search prediction per problem (validation every ``eval_every`` epochs and the test sets once
a round cost that). The rest is arithmetic over the cells, read from each arm's record
(tasks/study/arms.py): the pool a loop round trains on grows by at most the kept share of the round's
candidates (not at all in an arm that augments no round); an arm with a budget (the control) trains
the loop's final-round updates on the original pool; a warm-starting arm trains rounds 1..T for its
warm-start epochs; an arm adopting its seed's round 0 (flows/study_params.py) trains rounds 1..T only;
the cells run in waves (with several workers the shared rounds 0 first; the arms without a budget; then
those with one, whose budget is read from finished cells), each wave's cells taken in grid order by
whichever worker is free first.

Measured while other jobs share the CPU, the costs are too high; the dry run prints the load.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from typing import Sequence

from tasks.study.arms import ARMS, Arm
from tasks.study.stats import FEW_SEEDS


@dataclass(frozen=True)
class Costs:
    train_s: float  # seconds of a training pass, per problem and epoch
    predict_s: float  # seconds of a beam-search prediction, per problem


@dataclass(frozen=True)
class Sizes:
    train: int  # the original pool
    valid: int
    test: int  # every test set of the split together


def pools_by_round(start: int, rounds: int, keep_fraction: float, per_round_cap: int | None) -> list[int]:
    """An upper bound on the pool each round trains on: round r adds at most the kept share of its
    candidates, which the cap bounds (without a cap, assumed at most twice the pool)."""
    pools = [start]
    for _ in range(rounds):
        cap = per_round_cap or 2 * pools[-1]
        pools.append(pools[-1] + math.ceil(keep_fraction * min(cap, 2 * pools[-1])))
    return pools


def training_seconds(costs: Costs, sizes: Sizes, pool: int, epochs: int, eval_every: int) -> float:
    """One training of ``epochs`` on ``pool`` problems with validation, then the test sets scored."""
    validations = math.ceil(epochs / eval_every)
    return epochs * pool * costs.train_s + validations * sizes.valid * costs.predict_s + sizes.test * costs.predict_s


def cell_seconds(arm: Arm, costs: Costs, sizes: Sizes, pools: Sequence[int], epochs: int, eval_every: int,
                 warm_start_epochs: int | None = None, adopts_round_zero: bool = False) -> float:
    """One cell of ``arm``; ``pools`` are the loop's by round (:func:`pools_by_round`), ``warm_start_epochs``
    the study's; a cell that adopts its seed's round 0 (flows/study_params.py) does not train it."""
    epochs = arm.train.get("epochs", epochs)
    if arm.budget is not None:  # the budget arm's final-round updates on the original pool
        budget = max(epochs, math.ceil(epochs * pools[-1] / pools[0]))
        return training_seconds(costs, sizes, pools[0], budget, eval_every)
    rounds = arm.loop.get("rounds", len(pools) - 1)
    pools = list(pools[:rounds + 1])
    later = (warm_start_epochs or epochs) if arm.loop.get("warm_start") else epochs
    if arm.loop.get("augment_rounds") is False:  # nothing is added: every round trains on the original pool
        pools = [pools[0]] * len(pools)
    first = 0.0 if adopts_round_zero else training_seconds(costs, sizes, pools[0], epochs, eval_every)
    return first + sum(training_seconds(costs, sizes, pool, later, eval_every) for pool in pools[1:])


def makespan(durations: Sequence[float], workers: int) -> float:
    """Wall time of jobs taken in order, each by the worker free soonest (as Dask hands out a study's cells)."""
    free = [0.0] * max(1, workers)
    for seconds in durations:
        i = free.index(min(free))
        free[i] += seconds
    return max(free)


def study_wall_seconds(cells: Sequence[tuple[Arm, float]], workers: int, round_zero_first: Sequence[float] = ()) -> float:
    """(arm, seconds) per cell -> wall time on ``workers`` (Dask's waves): the round 0 the arms of each
    seed share (``round_zero_first``, their seconds, which ``cells`` leave out), then the arms without a
    budget, then those with one."""
    first = [s for arm, s in cells if arm.budget is None]
    later = [s for arm, s in cells if arm.budget is not None]
    return makespan(round_zero_first, workers) + makespan(first, workers) + makespan(later, workers)


def measure_costs(solver, train: Sequence, valid: Sequence, train_settings) -> Costs:
    """A training pass per problem and epoch (the second of two epochs on 256 problems, so start-up is not
    counted) and a beam-search prediction per problem, of ``solver`` (a study's SolverSettings) on a split's
    sets, with the torch threads set now."""
    from solvers.registry import build_solver

    model = build_solver(solver.name, config=solver.config(), device=solver.device)
    sample = train[:256]
    two = replace(train_settings.config(0, solver.device, progress=False), epochs=2)
    result = model.fit(sample, [], two)
    shown = valid[:64] or sample[:64]
    start = time.perf_counter()
    model.predict(shown, beam_size=train_settings.beam_size)
    return Costs(result.epochs[-1].seconds / len(sample), (time.perf_counter() - start) / len(shown))


def _settings_measurable_here(train, device: str, notes: list[str]):
    """``train`` (TrainSettings), or, where its step captures CUDA graphs and ``device`` is not CUDA here (a plan
    made on a laptop for a GPU machine), the same settings with the row-wise step, said in ``notes``."""
    from solvers.trainer import check_step_runs_here

    try:
        check_step_runs_here(train.step, "none", device)
    except ValueError:
        note = (f"note: step {train.step} captures CUDA graphs and device {device} is the CPU here: costs measured "
                "with step rowwise, so the estimate is the CPU's, not the GPU's")
        if note not in notes:
            notes.append(note)
        return train.model_copy(update={"step": "rowwise", "graph_fusion": "none"})
    return train


def dry_run(params) -> list[str]:
    """The grid and an estimated wall time of a study (``flows.study_params.StudyParams``), from the measured
    costs of each solver on each split's data with the torch threads a cell will have."""
    import torch

    from tasks.loop.datasets import load_split_file, split_problems

    cores, threads, previous = os.cpu_count() or 1, params.cell_threads(), torch.get_num_threads()
    torch.set_num_threads(threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    lines = [f"{len(params.cells())} cells: " + ", ".join(c.key for c in params.cells())]
    per_cell: list[tuple[Arm, float]] = []
    first: list[float] = []  # the shared rounds 0, trained before the other cells (with several workers)
    try:
        for spec in params.splits:  # each split's data is read once, for every solver
            loop = params.loop_params(next(c for c in params.cells() if c.split == spec.name))
            _, problems = spec.data.spec().load()
            split = load_split_file(loop.split_file) if loop.split_file else None
            train, valid, tests = split_problems(problems, 0, loop.test_fraction, loop.valid_fraction, split,
                                                 loop.iid_holdout_fraction)
            sizes = Sizes(len(train), len(valid), sum(len(t) for t in tests.values()))
            for solver in params.solvers:
                measured = _settings_measurable_here(params.train, solver.device, lines)
                costs = measure_costs(solver, train, valid, measured)
                pools = pools_by_round(len(train), params.loop.rounds, params.loop.keep_fraction,
                                       params.augment.per_round_cap)
                here = [c for c in params.cells() if c.solver == solver.name and c.split == spec.name]
                # with several workers each seed's shared round 0 is trained first, alone (flows/study.py)
                ahead = {params.round_zero_source(c) for c in here} - {None} \
                    if params.workers > 1 or params.dask_address else set()
                round_zero = training_seconds(costs, sizes, pools[0], params.train.epochs, params.train.eval_every)
                first += [round_zero] * len(ahead)
                cells = [(ARMS[c.arm], cell_seconds(ARMS[c.arm], costs, sizes, pools, params.train.epochs,
                                                    params.train.eval_every, params.loop.warm_start_epochs,
                                                    params.round_zero_source(c) is not None or c in ahead))
                         for c in here]
                per_cell += cells
                by_arm = ", ".join(f"{arm.name} {seconds / 3600:.2f} h" for arm, seconds in cells[:len(params.arms)])
                shared = any(params.round_zero_source(c) for c in here)
                lines.append(f"{solver.name} on {spec.name}: {sizes.train} train / {sizes.valid} valid / {sizes.test} "
                             f"test problems; measured {costs.train_s * 1000:.1f} ms a problem-epoch of training, "
                             f"{costs.predict_s * 1000:.1f} ms a problem of beam-{params.train.beam_size} prediction "
                             f"({threads} torch threads); pools by round {pools}; a cell: {by_arm}"
                             + (f" (round 0 left out where a seed's arms share it: {round_zero / 3600:.2f} h, "
                                "trained once)" if shared else ""))
    finally:
        torch.set_num_threads(previous)
    total = sum(seconds for _, seconds in per_cell) + sum(first)
    wall = study_wall_seconds(per_cell, params.workers, first)
    lines.append(f"estimated: {total / 3600:.2f} h of cell time, {wall / 3600:.2f} h wall with {params.workers} "
                 f"worker(s) x {threads} torch thread(s) (pools are an upper bound; candidate scoring adds a few "
                 f"percent)")
    if len(params.seeds) < FEW_SEEDS:
        lines.append(f"note: {len(params.seeds)} seed(s): the report's intervals will resample test problems only, "
                     f"not seeds; at least {FEW_SEEDS} seeds give the spread across seeds")
    if params.workers * threads > cores:
        lines.append(f"note: {params.workers} workers x {threads} threads exceed the {cores} cores: cells will run "
                     "slower than measured")
    if load > 0.5 * cores:
        lines.append(f"note: the load average was {load:.1f} on {cores} cores while measuring: other jobs share the "
                     "CPU, so the estimate is too high")
    return lines
