"""The arithmetic of a study's cost estimate (tasks/study/estimate.py)."""
from __future__ import annotations

import pytest

from tasks.study.arms import ARMS
from tasks.study.estimate import Costs, Sizes, cell_seconds, makespan, pools_by_round, study_wall_seconds


def test_pools_grow_by_the_kept_share_of_at_most_the_cap():
    assert pools_by_round(1000, 3, 0.2, 1500) == [1000, 1300, 1600, 1900]
    assert pools_by_round(100, 2, 0.2, None) == [100, 140, 196]  # no cap: candidates ~ twice the pool
    assert pools_by_round(100, 0, 0.2, 10) == [100]


def test_a_loop_cell_trains_every_round_and_a_control_the_final_updates_on_the_original_pool():
    costs, sizes = Costs(train_s=0.01, predict_s=0.002), Sizes(train=1000, valid=200, test=300)
    pools = [1000, 1300, 1600]
    one = lambda pool, epochs: epochs * pool * 0.01 + -(-epochs // 2) * 200 * 0.002 + 300 * 0.002  # noqa: E731
    assert cell_seconds(ARMS["loop"], costs, sizes, pools, 10, 2) == pytest.approx(sum(one(p, 10) for p in pools))
    assert cell_seconds(ARMS["random-ranker"], costs, sizes, pools, 10, 2) == cell_seconds(ARMS["loop"], costs, sizes, pools, 10, 2)
    assert cell_seconds(ARMS["warm-start"], costs, sizes, pools, 10, 2, warm_start_epochs=3) == pytest.approx(
        one(1000, 10) + one(1300, 3) + one(1600, 3))
    # the warm-control arm trains as warm-start does, on the original pool every round
    assert cell_seconds(ARMS["warm-control"], costs, sizes, pools, 10, 2, warm_start_epochs=3) == pytest.approx(
        one(1000, 10) + 2 * one(1000, 3))
    # the control: 10 x 1600 / 1000 = 16 epochs on the original 1000 problems, as many updates as round T
    assert cell_seconds(ARMS["control"], costs, sizes, pools, 10, 2) == pytest.approx(one(1000, 16))
    # an arm adopting its seed's shared round 0 trains rounds 1..T only
    assert cell_seconds(ARMS["least-confident"], costs, sizes, pools, 10, 2, adopts_round_zero=True) == pytest.approx(
        one(1300, 10) + one(1600, 10))


def test_cells_spread_over_workers_in_two_waves_in_grid_order():
    assert makespan([3, 3, 2, 2, 2], 2) == 7  # 3+2+2 | 3+2, not the best packing (3+3 | 2+2+2), as Dask does it
    assert makespan([1, 1, 1, 5], 2) == 6  # the long one last waits for a worker
    assert makespan([5, 1, 1, 1], 2) == 5
    assert makespan([4, 4], 1) == 8
    cells = [(ARMS[arm], seconds) for arm, seconds in
             [("loop", 4.0), ("random-ranker", 4.0), ("control", 1.0), ("loop", 4.0), ("control", 1.0)]]
    # loop-like cells first (4 + 4 on one worker, 4 on the other), then the controls (1 and 1 side by side)
    assert study_wall_seconds(cells, 2) == 9.0
    assert study_wall_seconds(cells, 1) == 14.0
    # the shared rounds 0 of three seeds go first, 2 + 1 on two workers
    assert study_wall_seconds(cells, 2, round_zero_first=[1.0, 1.0, 1.0]) == 11.0


def test_the_dry_run_measures_each_solver_on_each_split_and_sums_every_cell(tmp_path):
    from flows.study_params import StudyParams
    from tasks.study.estimate import dry_run

    params = StudyParams.model_validate({
        "name": "tiny",
        "splits": [{"name": "iid", "data": {"format": "builtin", "builtin_size": 80}},
                   {"name": "other", "data": {"format": "builtin", "builtin_size": 60}}],
        "solvers": [{"name": "gts", "model": {"embedding_size": 8, "hidden_size": 8, "min_count": 1}},
                    {"name": "lstm", "model": {"embedding_size": 8, "hidden_size": 8}}],
        "train": {"epochs": 3, "batch_size": 16, "beam_size": 2},
        "arms": ["control", "loop"], "seeds": [0, 1], "rounds": 2, "workers": 2, "torch_threads": 1,
        "out_dir": str(tmp_path)})
    lines = dry_run(params)
    assert lines[0].startswith("16 cells: ")
    measured = lines[1:5]  # one line per (split, solver), each with its own sizes and a cost per arm
    assert [line.split(":")[0] for line in measured] == ["gts on iid", "lstm on iid", "gts on other", "lstm on other"]
    assert all("loop " in line and "control " in line and "(1 torch threads)" in line for line in measured)
    assert "2 worker(s) x 1 torch thread(s)" in lines[5]
    cell_h, wall_h = (float(lines[5].split()[i]) for i in (1, 6))
    assert wall_h <= cell_h  # two workers: the wall time is at most the cells' total (hours, 2 decimals)
    assert "note: 2 seed(s): the report's intervals will resample test problems only, not seeds" in "\n".join(lines)
