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


def test_the_keep_fraction_is_validated_once_by_the_loop_config():
    from tasks.loop.config import LoopConfig

    for bad in (0, -0.1, 1.5, True):
        with pytest.raises(ValueError, match="keep_fraction must lie in"):
            LoopConfig(keep_fraction=bad)
    assert LoopConfig(keep_fraction=1).keep_fraction == 1


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


def test_per_origin_retention_keeps_as_many_as_the_top_fraction_spread_over_origins():
    from ranking.retention import retain

    # eight renamings of original problem "p" score highest, then one candidate each from q, r, s and t
    scored = [Scored(f"p{i}", 0.99 - i / 1000, "geca_op2", ("p",)) for i in range(8)] + \
             [Scored(x, 0.8 - i / 100, "geca_op2", (x,)) for i, x in enumerate("qrst")] + \
             [Scored("qr", 0.95, "geca_op1", ("q", "r"))]  # a composite of two origins
    top, _ = retain("top-fraction", scored, 0.3)  # ceil(0.3 * 13) = 4
    assert [s.id for s in top] == ["p0", "p1", "p2", "p3"]  # renamings of one problem
    spread, cut = retain("per-origin", scored, 0.3)
    # p0 uses p; the composite uses q and r, so q and r alone are passed over; s and t follow
    assert [s.id for s in spread] == ["p0", "qr", "s", "t"] and cut == 0.77
    assert [s.id for s in retain("per-origin", scored, 1.0)[0]] == ["p0", "qr", "s", "t"]  # origins run out
    # without a recorded origin a candidate is its own origin: the policy is then the plain top fraction
    plain = [Scored(s.id, s.score) for s in scored]
    assert retain("per-origin", plain, 0.3)[0] == retain("top-fraction", plain, 0.3)[0]
    assert retain("per-origin", [Scored("a", math.nan)], 1.0) == ([], None)
