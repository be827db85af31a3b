"""tasks/study/stats.py: the paired bootstrap over seeds whose test sides differ (a seeded split)."""
import random

import pytest

from tasks.study.stats import paired_bootstrap_per_seed


def _arm(rates, seed):
    """seed -> its own problem ids -> correct, each seed with its own problems and accuracy."""
    rng = random.Random(seed)
    return {s: {f"s{s}-p{i}": rng.random() < rate for i in range(200)} for s, rate in rates.items()}


def test_the_point_is_the_mean_of_each_seeds_own_difference():
    a = {0: {"x": True, "y": True}, 1: {"u": True, "v": False, "w": False, "z": False}}
    b = {0: {"x": False, "y": True}, 1: {"u": False, "v": False, "w": False, "z": False}}
    interval = paired_bootstrap_per_seed(a, b)
    assert interval.difference == pytest.approx((0.5 + 0.25) / 2)
    assert (interval.seeds, interval.problems) == (2, 6)
    assert interval.low <= interval.difference <= interval.high


def test_identical_runs_give_a_zero_interval_and_opposite_runs_a_full_one():
    a = _arm({0: 0.7, 1: 0.8, 2: 0.6}, 1)
    same = paired_bootstrap_per_seed(a, a)
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0)
    right = {s: {p: True for p in problems} for s, problems in a.items()}
    wrong = {s: {p: False for p in problems} for s, problems in a.items()}
    full = paired_bootstrap_per_seed(right, wrong)
    assert (full.difference, full.low, full.high) == (1.0, 1.0, 1.0)


def test_a_real_gap_excludes_zero_and_no_gap_includes_it():
    better, worse, also = _arm({0: 0.9, 1: 0.9, 2: 0.9}, 2), _arm({0: 0.6, 1: 0.6, 2: 0.6}, 3), _arm({0: 0.9, 1: 0.9, 2: 0.9}, 4)
    for arm in (worse, also):  # the same problem ids as `better`
        assert all(arm[s].keys() == better[s].keys() for s in better)
    gap = paired_bootstrap_per_seed(better, worse)
    assert gap.excludes_zero and 0.2 < gap.low < gap.difference < gap.high < 0.4
    none = paired_bootstrap_per_seed(better, also)
    assert not none.excludes_zero
    assert paired_bootstrap_per_seed(better, worse, seed=5) == paired_bootstrap_per_seed(better, worse, seed=5)


def test_only_shared_seeds_and_problems_count_and_none_is_an_error():
    a = {0: {"x": True, "y": False}, 1: {"z": True}}
    b = {0: {"x": False, "q": True}, 2: {"z": False}}
    interval = paired_bootstrap_per_seed(a, b)
    assert (interval.seeds, interval.problems, interval.difference) == (1, 1, 1.0)
    with pytest.raises(ValueError, match="no seed"):
        paired_bootstrap_per_seed({0: {"x": True}}, {1: {"x": True}})
    with pytest.raises(ValueError, match="seed 0: no test problem"):
        paired_bootstrap_per_seed({0: {"x": True}}, {0: {"y": True}})
