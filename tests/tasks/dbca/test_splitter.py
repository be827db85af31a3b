"""The greedy DBCA split on toys whose best split is known, the I.I.D. split, and group moves."""
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from tasks.dbca.divergence import DivergenceTracker, FeatureIndex
from tasks.dbca.splitter import SplitConfig, greedy_split, iid_split, measure_divergences


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
    code = ("import sys, tasks.dbca.divergence, tasks.dbca.splitter, tasks.dbca.atoms, tasks.dbca.synthetic; "
            "print('prefect' in sys.modules, 'mlflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_measure_divergences_leaves_out_rare_compounds_when_asked():
    examples = [["A"], ["A"], ["B"]]
    same = lambda e: e  # noqa: E731
    # all compounds: train {A: 1}, test {A: 1, B: 1}: C = 1^0.1 * (1/2)^0.9
    assert measure_divergences(examples, [0], [1, 2], same, same)[1] == pytest.approx(1 - 0.5 ** 0.9)
    # B is held by one example only: left out, both sides are {A: 1}
    assert measure_divergences(examples, [0], [1, 2], same, same, min_compound_examples=2)[1] == pytest.approx(0.0)


def test_group_swap_moves_every_train_holder_of_a_compound_to_test():
    from tasks.dbca.splitter import _Split

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
