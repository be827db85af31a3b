"""evaluate_predictions on hand-made predictions, every figure computed by hand."""
from fractions import Fraction

import pytest

from mwp.problem import build_problem
from solvers.base import Prediction
from solvers.evaluate import evaluate_predictions, normalize
from mwp.expr import from_prefix


def _problems():
    return [
        build_problem("a", "Tom has 3 apples and buys 5 more .", "x=3+5", 8, source="toy", language="en"),
        build_problem("b", "A box holds 4 pens and there are 6 boxes .", "x=4*6", 24, source="toy", language="en"),
        build_problem("c", "Ann had 9 cards and gave away 2 .", "x=9-2", 7, source="toy", language="en"),
        build_problem("d", "Lily has 20 dollars and 4 coins .", "x=20/4", 5, source="toy", language="en"),
        build_problem("e", "Sam has 6 pens and 6 more .", "x=6+6", 12, source="toy", language="en"),
    ]


def test_scores_by_hand():
    problems = _problems()
    preds = [
        ["+", "N1", "N0"],  # a: commutative swap: answer and equation correct
        ["*", "N0", "N1"],  # b: identical
        ["-", "N1", "N0"],  # c: 2 - 9 = -7: wrong answer, wrong equation, valid
        ["/", "N0", "-", "N1", "N1"],  # d: division by zero: invalid
        ["*", "N0", "2"],  # e: 6 * 2 = 12: right answer, different equation
    ]
    report = evaluate_predictions(problems, preds)
    assert report.n == 5
    assert report.answer_acc == pytest.approx(3 / 5)
    assert report.equation_acc == pytest.approx(2 / 5)
    assert report.invalid_rate == pytest.approx(1 / 5)
    assert report.per_problem == (True, True, False, False, True)


def test_malformed_and_out_of_range_are_invalid():
    problems = _problems()[:3]
    preds = [
        Prediction(tokens=("+", "N0"), expression=None, score=-1.0),  # ends early
        Prediction(tokens=("*", "N0", "N7"), expression=None, score=-1.0),  # slot beyond the quantities
        Prediction(tokens=("-", "N0", "N1"), expression=None, score=-1.0),  # correct (tokens are what count)
    ]
    report = evaluate_predictions(problems, preds)
    assert (report.answer_acc, report.equation_acc, report.invalid_rate) == (pytest.approx(1 / 3), pytest.approx(1 / 3), pytest.approx(2 / 3))


def test_answer_tolerance_is_relative_1e4():
    p = build_problem("f", "Split 10 into 3 parts .", "x=10/3", "3.3333333", source="toy", language="en", check_answer=False)
    assert p.answer == Fraction("3.3333333")
    assert evaluate_predictions([p], [["/", "N0", "N1"]]).answer_acc == 1.0  # 1e-8 relative off
    assert evaluate_predictions([p], [["-", "N0", "N1"]]).answer_acc == 0.0


def test_normalize_orders_commutative_operands_only():
    assert normalize(from_prefix(["+", "N1", "*", "N2", "N0"])) == from_prefix(["+", "*", "N0", "N2", "N1"])
    assert normalize(from_prefix(["-", "N1", "N0"])) == from_prefix(["-", "N1", "N0"])


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        evaluate_predictions(_problems(), [["N0"]])
