"""DBCA divergences on hand-computed counters, incremental counts against full recomputation, and
the greedy split on toys whose best split is known."""
import math
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from tasks.dbca import (DivergenceTracker, FeatureIndex, SplitConfig, chernoff_coefficient, divergence, greedy_split,
                        iid_split, measure_divergences, random_assignment)


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


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_incremental_counts_equal_full_recomputation_on_random_swaps(alpha):
    rng = random.Random(7)
    examples = _random_examples(rng)
    in_test = random_assignment(len(examples), 0.25, seed=3)
    tracker = DivergenceTracker(FeatureIndex.build(examples, lambda e: e), in_test.copy(), alpha)
    for _ in range(200):
        e = rng.randrange(len(examples))
        to_test = not in_test[e]
        predicted = tracker.divergence_after(np.array([e]), to_test)[0]
        tracker.move(e, to_test)
        in_test[e] = to_test
        full = divergence(sum((examples[i] for i in np.flatnonzero(~in_test)), Counter()),
                          sum((examples[i] for i in np.flatnonzero(in_test)), Counter()), alpha)
        assert tracker.divergence() == pytest.approx(full, abs=1e-9)
        assert predicted == pytest.approx(full, abs=1e-9)


def test_feature_index_keeps_counts_and_handles_examples_without_features():
    index = FeatureIndex.build([["a", "a", "b"], [], ["b"]], lambda e: e)
    assert index.keys == ("a", "b")
    assert index.totals.tolist() == [3.0, 0.0, 1.0]
    assert index.counter(0) == Counter(a=2, b=1)
    assert index.counter(1) == Counter()


def _toy():
    # 8 examples with compound X, 2 with compound Y; every example has atom "s" (and X/Y share it)
    return [("x", i) for i in range(8)] + [("y", i) for i in range(2)]


def _atoms(example):
    return ["s"]


def _compounds(example):
    return [example[0].upper()]


def test_greedy_split_moves_the_rare_compound_to_test():
    result = greedy_split(_toy(), _atoms, _compounds, SplitConfig(test_fraction=0.2, seed=1, progress=False))
    assert sorted(result.test) == [8, 9]  # both Y examples: train has only X, test only Y
    assert result.compound_divergence == pytest.approx(1.0)
    assert result.atom_divergence == pytest.approx(0.0, abs=1e-12)
    assert len(result.train) == 8 and result.stop_reason == "no_improvement"


def test_greedy_split_respects_the_atom_constraints_and_is_deterministic():
    rng = random.Random(11)
    examples = [(Counter(rng.choice("abcd") for _ in range(2)), Counter(rng.choice("PQRSTUVW") for _ in range(2)))
                for _ in range(60)]
    atoms, compounds = (lambda e: e[0]), (lambda e: e[1])
    config = SplitConfig(test_fraction=0.25, seed=5, max_atom_divergence=0.05, progress=False)
    first = greedy_split(examples, atoms, compounds, config)
    again = greedy_split(examples, atoms, compounds, config)
    assert first == again
    assert len(first.test) == 15 and len(first.train) == 45
    train_atoms = set().union(*(examples[i][0] for i in first.train))
    assert set().union(*(examples[i][0] for i in first.test)) <= train_atoms
    a, c = measure_divergences(examples, first.train, first.test, atoms, compounds)
    assert a == pytest.approx(first.atom_divergence) and c == pytest.approx(first.compound_divergence)
    assert a <= 0.05 + 1e-12
    assert c > iid_split(examples, atoms, compounds, config).compound_divergence


def test_target_divergence_stops_early_and_snapshots_are_recorded():
    examples = [(Counter("ab"), Counter([f"C{i % 6}"])) for i in range(30)]
    config = SplitConfig(test_fraction=0.2, seed=0, snapshot_divergences=(0.3, 0.6), progress=False)
    result = greedy_split(examples, lambda e: e[0], lambda e: e[1], config)
    assert result.stop_reason == "target"
    assert [s.target for s in result.snapshots] == [0.3, 0.6]
    assert all(s.compound_divergence >= s.target for s in result.snapshots)
    assert result.compound_divergence >= 0.6


def test_iid_split_has_the_requested_sizes():
    result = iid_split(list(range(10)), lambda e: ["a"], lambda e: [str(e % 2)], SplitConfig(test_fraction=0.3))
    assert len(result.test) == 3 and len(result.train) == 7 and result.stop_reason == "random"


def test_pure_modules_do_not_import_prefect_or_mlflow():
    code = "import sys, tasks.dbca, tasks.mwp_atoms, tasks.synthetic; print('prefect' in sys.modules, 'mlflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


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


def test_measure_divergences_leaves_out_rare_compounds_when_asked():
    examples = [["A"], ["A"], ["B"]]
    same = lambda e: e  # noqa: E731
    # all compounds: train {A: 1}, test {A: 1, B: 1}: C = 1^0.1 * (1/2)^0.9
    assert measure_divergences(examples, [0], [1, 2], same, same)[1] == pytest.approx(1 - 0.5 ** 0.9)
    # B is held by one example only: left out, both sides are {A: 1}
    assert measure_divergences(examples, [0], [1, 2], same, same, min_compound_examples=2)[1] == pytest.approx(0.0)


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_set_scores_equal_full_recomputation(alpha):
    rng = random.Random(3)
    examples = _random_examples(rng)
    in_test = random_assignment(len(examples), 0.25, seed=1)
    tracker = DivergenceTracker(FeatureIndex.build(examples, lambda e: e), in_test.copy(), alpha)
    train = np.flatnonzero(~in_test)
    sets = [np.asarray(sorted(rng.sample(list(train), rng.randint(1, 6)))) for _ in range(10)]
    predicted = tracker.divergence_after_sets(sets, to_test=True)
    for members, score in zip(sets, predicted):
        after = in_test.copy()
        after[members] = True
        full = divergence(sum((examples[i] for i in np.flatnonzero(~after)), Counter()),
                          sum((examples[i] for i in np.flatnonzero(after)), Counter()), alpha)
        assert score == pytest.approx(full, abs=1e-9)


def test_group_swap_moves_every_train_holder_of_a_compound_to_test():
    from tasks.dbca import _Split

    # examples 0, 1 hold X, 2..9 hold Y; test starts as {2, 3} (two Y): p = (2/8, 6/8), q = (0, 1)
    examples = ["X", "X"] + ["Y"] * 8
    in_test = np.zeros(10, dtype=bool)
    in_test[[2, 3]] = True
    atoms = DivergenceTracker(FeatureIndex.build(examples, lambda e: ["s"]), in_test.copy(), 0.5)
    compounds = DivergenceTracker(FeatureIndex.build(examples, lambda e: [e]), in_test.copy(), 0.1)
    split = _Split(atoms, compounds, in_test)
    assert compounds.divergence() == pytest.approx(1 - 0.75 ** 0.1)  # 0.0284
    moved = split.find_group_swap(compounds.index.holders(), 0.02, tries=5, max_group=4, pool_size=0,
                                  rng=np.random.default_rng(0))
    assert moved == 2  # X's two holders went to test, the two Y came back
    assert np.flatnonzero(in_test).tolist() == [0, 1]
    assert compounds.divergence() == pytest.approx(1.0)
    # nothing left to gain: no compound has two or more train holders within max_group = 4... Y has 8
    assert split.find_group_swap(compounds.index.holders(), 0.02, 5, 4, 0, np.random.default_rng(0)) is None


def test_group_moves_get_past_the_single_swap_optimum_on_a_toy():
    # 40 examples, two atoms from {a, b, c} and two compounds each, from a vocabulary of random size
    rng = random.Random(2)
    examples = [(Counter(rng.choice("abc") for _ in range(2)),
                 Counter(rng.choice("PQRSTUVWXYZ"[:rng.randint(2, 11)]) for _ in range(2))) for _ in range(40)]
    atoms, compounds = (lambda e: e[0]), (lambda e: e[1])
    base = SplitConfig(test_fraction=0.2, seed=0, max_atom_divergence=0.05, progress=False)
    single = greedy_split(examples, atoms, compounds, SplitConfig(**{**base.__dict__, "group_moves": False}))
    grouped = greedy_split(examples, atoms, compounds, base)
    assert grouped == greedy_split(examples, atoms, compounds, base)  # deterministic
    a, c = measure_divergences(examples, grouped.train, grouped.test, atoms, compounds, min_compound_examples=2)
    assert a == pytest.approx(grouped.atom_divergence) and c == pytest.approx(grouped.compound_divergence)
    assert a <= 0.05 + 1e-12 and len(grouped.test) == 8
    assert single.group_moves == 0 and grouped.group_moves >= 1
    assert grouped.compound_divergence > single.compound_divergence + 0.1  # measured: 0.66 against 0.47
