"""What a study will cost before it runs (``compaug study --dry-run``).

Two costs are measured per solver on the study's data, with the torch threads a cell will have: a
training pass per problem and epoch (the second of two epochs on a sample, so start-up is not counted)
and a beam-search prediction per problem (validation every ``eval_every`` epochs and the test sets once
a round cost that). The rest is arithmetic over the cells, read from each arm's record
(tasks/study/arms.py): the pool a loop round trains on grows by at most the kept share of the round's
candidates (not at all in an arm that augments no round); an arm with a budget (the control) trains
the loop's final-round updates on the original pool; a warm-starting arm trains rounds 1..T for its
warm-start epochs; the cells run in two waves (the arms without a budget, then those with one, whose
budget is read from finished cells), each wave's cells taken in grid order by whichever worker is
free first.

Measured while other jobs share the CPU, the costs are too high; the dry run prints the load.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from tasks.study.arms import Arm


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
