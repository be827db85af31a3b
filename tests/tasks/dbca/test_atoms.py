"""Atoms and compounds of hand-written expression trees, context windows, clustering, Table-3 stats."""
from collections import Counter
from fractions import Fraction

import pytest

from mwp.expr import BinOp, Num, Qty
from mwp.problem import build_problem
from tasks.dbca.atoms import (atoms_of, choose_k, cluster_quantities, compounds_of, expression_atoms,
                              expression_compounds, format_table, pick_k, quantity_context, split_statistics)
from tasks.dbca.splitter import SplitConfig

# ((N0 + N1) * N2) - 1 with quantity labels N0 -> 1, N1 -> 0, N2 -> 2
TREE = BinOp("-", BinOp("*", BinOp("+", Qty(0), Qty(1)), Qty(2)), Num(Fraction(1)))
LABELS = {0: 1, 1: 0, 2: 2}.__getitem__


def test_atoms_of_a_hand_written_tree():
    assert expression_atoms(TREE, LABELS) == Counter({"-": 1, "*": 1, "+": 1, "q1": 1, "q0": 1, "q2": 1, "c1": 1})


def test_compounds_of_a_hand_written_tree_are_canonical_sub_trees():
    # the + operands are sorted (q0 before q1); the depth-3 root is left out at the default depth 2
    assert expression_compounds(TREE, LABELS) == Counter({"(q0 + q1)": 1, "((q0 + q1) * q2)": 1})
    assert expression_compounds(TREE, LABELS, max_depth=None) == Counter(
        {"(q0 + q1)": 1, "((q0 + q1) * q2)": 1, "(((q0 + q1) * q2) - c1)": 1})


def test_commutative_operands_make_one_compound_but_subtraction_keeps_its_order():
    swapped = BinOp("+", Qty(1), Qty(0))
    assert expression_compounds(swapped, LABELS) == Counter({"(q0 + q1)": 1})
    assert expression_compounds(BinOp("-", Qty(1), Qty(0)), LABELS) == Counter({"(q0 - q1)": 1})
    assert expression_compounds(BinOp("-", Qty(0), Qty(1)), LABELS) == Counter({"(q1 - q0)": 1})


def _problem(pid, text, equation, answer):
    return build_problem(pid, text, equation, answer, source="test", language="en")


def test_quantity_context_window_masks_other_numbers():
    p = _problem("1", "Tom has 3 red apples and 4 green pears.", "x=3+4", 7)
    assert quantity_context(p, 0, window=2) == ["tom", "has", "red", "apples"]
    assert quantity_context(p, 1, window=3) == ["red", "apples", "and", "green", "pears", "."]
    assert quantity_context(p, 0, window=4) == ["tom", "has", "red", "apples", "and", "<num>"]


def _pool():
    return [
        _problem("a", "A car drives 30 miles per hour for 2 hours. How far does it go?", "x=30*2", 60),
        _problem("b", "A car drives 50 miles per hour for 3 hours. How far does it go?", "x=50*3", 150),
        _problem("c", "A bag has 7 apples costing 2 dollars each. What do they cost?", "x=7*2", 14),
        _problem("d", "A bag has 9 apples costing 5 dollars each. What do they cost?", "x=9*5", 45),
    ]


def test_quantities_with_the_same_context_share_a_cluster():
    pool = _pool()
    clusters = cluster_quantities(pool, k=4, window=2)
    labels = clusters.labels
    # identical windows -> identical labels; the four different windows -> four clusters
    assert labels["a"] == labels["b"] and labels["c"] == labels["d"]
    assert len(set(labels["a"] + labels["c"])) == 4
    a0, a1 = labels["a"]
    assert atoms_of(pool[0], clusters) == Counter({"*": 1, f"q{a0}": 1, f"q{a1}": 1})
    first, second = sorted([f"q{a0}", f"q{a1}"])
    assert compounds_of(pool[0], clusters) == Counter({f"({first} * {second})": 1})


def test_choose_k_keeps_the_k_with_the_highest_compound_divergence():
    choice = choose_k(_pool() * 3, SplitConfig(test_fraction=0.25, progress=False), ks=(1, 2), window=2,
                      rule="highest")
    assert set(choice.tried) == {1, 2} and set(choice.iid) == {1, 2}
    assert choice.tried[choice.k] == max(choice.tried.values())
    assert choice.result.compound_divergence == choice.tried[choice.k]


def test_choose_k_by_gain_ranks_the_gain_over_the_iid_split():
    choice = choose_k(_pool() * 3, SplitConfig(test_fraction=0.25, progress=False), ks=(1, 2), window=2)
    gains = {k: choice.tried[k] - choice.iid[k] for k in (1, 2)}
    assert choice.rule == "gain" and gains[choice.k] == max(gains.values())


def test_pick_k_gain_corrects_for_divergence_that_grows_with_k():
    # the MAWPS pattern: every split looks more divergent at a larger k
    comdiv, iid = {5: 0.71, 10: 0.78, 20: 0.85}, {5: 0.09, 10: 0.12, 20: 0.25}
    assert pick_k(comdiv, iid, "highest") == 20
    assert pick_k(comdiv, iid, "gain") == 10  # gains 0.62, 0.66, 0.60
    assert pick_k({5: 0.5, 10: 0.75}, {5: 0.25, 10: 0.5}, "gain") == 5  # a tie (0.25 each) goes to the smaller k
    with pytest.raises(ValueError, match="k rule"):
        pick_k(comdiv, iid, "largest")


def test_split_statistics_is_a_table_3_row():
    pool = _pool()  # 17, 17, 15 and 15 tokens: mean 16
    short = _problem("e", "Add 2 and 3.", "x=2+3", 5)  # 5 tokens
    row = split_statistics(pool + [short], [0, 1, 2, 3], [4], 0.01, 0.77)
    assert row == {"number_ratio": "4/1", "length_ratio": pytest.approx(16 / 5),
                   "atom_divergence": 0.01, "compound_divergence": 0.77}
    assert "| comdiv | 4/1 |" in format_table({"comdiv": row})
