import math

import pytest

from ranking.retention import Scored, keep_above_threshold, keep_top_fraction


def test_top_20_percent_of_five_keeps_the_best_one():
    scored = [Scored("a", -1.2), Scored("b", -0.3), Scored("c", -2.0), Scored("d", -0.9), Scored("e", -5.0)]
    kept, cut = keep_top_fraction(scored, 0.2)
    assert [s.id for s in kept] == ["b"]
    assert cut == -0.3


def test_top_fraction_rounds_up_and_orders_by_score():
    scored = [Scored(str(i), float(i)) for i in range(10)]
    kept, cut = keep_top_fraction(scored, 0.25)  # ceil(2.5) = 3
    assert [s.id for s in kept] == ["9", "8", "7"]
    assert cut == 7.0


def test_ties_are_broken_by_id_whatever_the_input_order():
    a = [Scored("z", 1.0), Scored("m", 1.0), Scored("a", 1.0), Scored("q", 0.5)]
    kept1, _ = keep_top_fraction(a, 0.5)
    kept2, _ = keep_top_fraction(list(reversed(a)), 0.5)
    assert [s.id for s in kept1] == [s.id for s in kept2] == ["a", "m"]


def test_nan_scores_are_never_kept_and_empty_input_keeps_nothing():
    kept, cut = keep_top_fraction([Scored("a", math.nan), Scored("b", 0.1)], 1.0)
    assert [s.id for s in kept] == ["b"] and cut == 0.1
    assert keep_top_fraction([], 0.2) == ([], None)


def test_fraction_out_of_range_is_an_error():
    with pytest.raises(ValueError):
        keep_top_fraction([Scored("a", 1.0)], 1.5)


def test_threshold_policy():
    kept, cut = keep_above_threshold([Scored("a", 0.1), Scored("b", 0.7), Scored("c", 0.5)], 0.5)
    assert [s.id for s in kept] == ["b", "c"] and cut == 0.5


def test_per_operator_retention_keeps_the_top_fraction_of_each_operator():
    from ranking.retention import retain

    # op2 near-copies score high, op1 compositions low: globally the top 40% would be op2 only.
    scored = [Scored(f"b{i}", 0.9 - i / 100, "geca_op2") for i in range(6)] + \
             [Scored(f"a{i}", 0.3 - i / 100, "geca_op1") for i in range(4)]
    top, _ = retain("top-fraction", scored, 0.4)
    assert {s.group for s in top} == {"geca_op2"} and len(top) == 4
    each, cut = retain("per-operator", scored, 0.4)
    # ceil(0.4 * 6) = 3 of op2 and ceil(0.4 * 4) = 2 of op1, the best of each; the cut is op1's lowest kept
    assert sorted(s.id for s in each) == ["a0", "a1", "b0", "b1", "b2"] and cut == 0.29
