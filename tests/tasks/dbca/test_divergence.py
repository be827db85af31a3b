"""DBCA divergences on hand-computed counters, and the incremental trackers against full recomputation."""
import math
import random
from collections import Counter

import numpy as np
import pytest

from tasks.dbca.divergence import DivergenceTracker, FeatureIndex, chernoff_coefficient, divergence
from tasks.dbca.splitter import random_assignment


def test_identical_distributions_have_divergence_zero():
    # same frequencies (1/3, 2/3), different totals
    assert divergence(Counter(a=1, b=2), Counter(a=2, b=4), 0.1) == pytest.approx(0.0, abs=1e-12)
    assert divergence(Counter(a=1, b=2), Counter(a=2, b=4), 0.5) == pytest.approx(0.0, abs=1e-12)


def test_disjoint_distributions_have_divergence_one():
    assert divergence(Counter(a=3), Counter(b=1, c=5), 0.5) == 1.0


def test_worked_intermediate_value():
    # P = (1/2, 1/2) over {a, b}, Q = (1, 0): C = (1/2)^alpha * 1^(1-alpha)
    p, q = Counter(a=1, b=1), Counter(a=4)
    assert chernoff_coefficient(p, q, 0.5) == pytest.approx(math.sqrt(0.5))  # 0.7071
    assert divergence(p, q, 0.5) == pytest.approx(0.29289, abs=1e-5)
    assert divergence(p, q, 0.1) == pytest.approx(1 - 0.5 ** 0.1)  # 0.0670
    assert divergence(p, q, 0.1) == pytest.approx(0.06697, abs=1e-5)


def test_alpha_must_lie_inside_the_unit_interval():
    with pytest.raises(ValueError, match="alpha"):
        divergence(Counter(a=1), Counter(a=1), 1.0)


def _random_examples(rng, n=40, vocabulary="abcdefgh"):
    return [Counter(rng.choice(vocabulary) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def _random_tracker(rng, split_seed, alpha):
    """40 random examples, a seeded 30/10 split and its tracker."""
    examples = _random_examples(rng)
    in_test = random_assignment(len(examples), 0.25, seed=split_seed)
    return examples, in_test, DivergenceTracker(FeatureIndex.build(examples, lambda e: e), in_test.copy(), alpha)


def _full_divergence(examples, in_test, alpha):
    """The divergence recomputed from every example, the reference for the trackers' predictions."""
    return divergence(sum((examples[i] for i in np.flatnonzero(~in_test)), Counter()),
                      sum((examples[i] for i in np.flatnonzero(in_test)), Counter()), alpha)


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_incremental_counts_equal_full_recomputation_on_random_swaps(alpha):
    rng = random.Random(7)
    examples, in_test, tracker = _random_tracker(rng, 3, alpha)
    for _ in range(200):
        e = rng.randrange(len(examples))
        to_test = not in_test[e]
        predicted = tracker.divergence_after(np.array([e]), to_test)[0]
        tracker.move(e, to_test)
        in_test[e] = to_test
        full = _full_divergence(examples, in_test, alpha)
        assert tracker.divergence() == pytest.approx(full, abs=1e-9)
        assert predicted == pytest.approx(full, abs=1e-9)


def test_feature_index_keeps_counts_and_handles_examples_without_features():
    index = FeatureIndex.build([["a", "a", "b"], [], ["b"]], lambda e: e)
    assert index.keys == ("a", "b")
    assert index.totals.tolist() == [3.0, 0.0, 1.0]
    assert index.counter(0) == Counter(a=2, b=1)
    assert index.counter(1) == Counter()


def test_feature_index_drops_keys_held_by_fewer_examples_than_asked():
    # "c" occurs twice but in one example only: it can never be on both sides
    index = FeatureIndex.build([["a", "b"], ["a"], ["c", "c"]], lambda e: e, min_examples=2)
    assert index.keys == ("a",)
    assert index.totals.tolist() == [1.0, 1.0, 0.0]
    assert FeatureIndex.build([["a", "b"], ["a"], ["c", "c"]], lambda e: e).keys == ("a", "b", "c")


def test_holders_is_the_inverted_index():
    index = FeatureIndex.build([["a", "b"], ["a"], ["b", "b"]], lambda e: e)
    starts, examples = index.holders()
    assert [examples[starts[k]:starts[k + 1]].tolist() for k in range(len(index.keys))] == [[0, 1], [0, 2]]


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_set_scores_equal_full_recomputation(alpha):
    rng = random.Random(3)
    examples, in_test, tracker = _random_tracker(rng, 1, alpha)
    train = np.flatnonzero(~in_test)
    sets = [np.asarray(sorted(rng.sample(list(train), rng.randint(1, 6)))) for _ in range(10)]
    predicted = tracker.divergence_after_sets(sets, to_test=True)
    for members, score in zip(sets, predicted):
        after = in_test.copy()
        after[members] = True
        assert score == pytest.approx(_full_divergence(examples, after, alpha), abs=1e-9)
