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
