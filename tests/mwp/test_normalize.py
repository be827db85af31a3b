"""Equation normalization: hand-checked normal forms, idempotence, and answers kept on every
expression of the built-in corpus and (when ../shared/data is there) of MAWPS and Math23K."""
from fractions import Fraction
from pathlib import Path

import pytest

from mwp.expr import BinOp, DivisionByZeroError, Qty, evaluate, from_prefix, to_prefix
from mwp.normalize import merge_repeated_slots, normalize_expression, normalize_problem
from mwp.problem import build_problem
from mwp.readers import load_dataset

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def norm(prefix: str, values=None) -> str:
    return " ".join(to_prefix(normalize_expression(from_prefix(prefix.split()), values)))


@pytest.mark.parametrize("given, expected", [
    ("+ N1 N0", "+ N0 N1"),  # operand order
    ("* + N1 N0 N2", "* N2 + N0 N1"),  # a slot sorts before an operator
    ("+ N0 + N2 N1", "+ + N0 N1 N2"),  # brackets: N0 + (N2 + N1)
    ("+ + N2 N0 N1", "+ + N0 N1 N2"),  # (N2 + N0) + N1
    ("- N0 - N1 N2", "- + N0 N2 N1"),  # N0 - (N1 - N2) = N0 + N2 - N1
    ("- - N0 N2 N1", "- - N0 N1 N2"),  # subtracted terms sorted
    ("- N0 + N2 N1", "- - N0 N1 N2"),  # N0 - (N2 + N1) = N0 - N1 - N2
    ("/ N0 * N2 N1", "/ / N0 N1 N2"),  # N0 / (N2 * N1) = N0 / N1 / N2
    ("* / N2 N1 N0", "/ * N0 N2 N1"),  # N2 / N1 * N0 = N0 * N2 / N1
    ("/ N0 / N1 N2", "/ N0 / N1 N2"),  # a quotient divisor is kept whole
    ("* 100 N0", "* N0 100"),  # slots before constants
    ("+ 3 2", "+ 2 3"),  # constants by value
    ("^ + N1 N0 2", "^ + N0 N1 2"),  # ^ keeps its operand order, its operands are normalized
    ("- N0 * N2 N1", "- N0 * N1 N2"),  # a product inside a difference
])
def test_normal_forms_by_hand(given, expected):
    assert norm(given) == expected


def test_equivalent_spellings_share_one_form():
    spellings = ["+ + N0 N1 N2", "+ N0 + N1 N2", "+ N2 + N1 N0", "+ + N1 N2 N0", "+ N1 + N2 N0"]
    assert {norm(s) for s in spellings} == {"+ + N0 N1 N2"}
    assert norm("- + N0 N2 N1") == norm("+ - N0 N1 N2") == norm("- N0 - N1 N2")


def test_repeated_quantities_take_the_first_slot_of_their_value():
    values = [Fraction(3), Fraction(5), Fraction(3)]
    assert to_prefix(merge_repeated_slots(from_prefix("* N2 N1".split()), values)) == ["*", "N0", "N1"]
    assert norm("+ N2 N1", values) == "+ N0 N1"
    assert norm("+ N2 N1") == "+ N1 N2"  # without values nothing is merged


def test_normal_form_is_idempotent_and_keeps_the_value():
    values = [Fraction(7), Fraction(2), Fraction(5), Fraction(4)]
    for prefix in ["- N0 - N1 + N2 N3", "/ * N3 N0 / N1 N2", "* - N0 N1 + N3 N2", "+ / N0 N1 - N3 * N2 N1"]:
        once = normalize_expression(from_prefix(prefix.split()), values)
        assert normalize_expression(once, values) == once
        assert evaluate(once, values) == evaluate(from_prefix(prefix.split()), values)


def test_division_by_zero_stays_an_error():
    values = [Fraction(6), Fraction(3), Fraction(0)]
    expr = from_prefix("/ N0 / N1 N2".split())  # 6 / (3 / 0)
    with pytest.raises(DivisionByZeroError):
        evaluate(normalize_expression(expr), values)


def test_a_deep_chain_normalizes_without_recursion():
    expr = Qty(0)
    for i in range(1, 3000):
        expr = BinOp("+", Qty(i), expr)  # N2999 + (... + (N1 + N0))
    out = to_prefix(normalize_expression(expr))
    assert out[:2999] == ["+"] * 2999 and out[2999:] == [f"N{i}" for i in range(3000)]


def test_normalize_problem_keeps_the_stored_answer():
    problem = build_problem("p", "Tom has 3 apples and buys 5 more. How many apples?", "x=5+3", 8, "toy")
    out = normalize_problem(problem)
    assert out.prefix() == ["+", "N0", "N1"] and out.answer == problem.answer == 8 and out.id == "p"


def _assert_answers_kept(problems):
    assert problems
    for p in problems:
        normal = normalize_expression(p.expression, p.values)
        assert evaluate(normal, p.values) == evaluate(p.expression, p.values), (p.id, p.prefix())
        assert normalize_expression(normal, p.values) == normal, p.id


def test_every_builtin_expression_keeps_its_answer():
    _assert_answers_kept(load_dataset("builtin").problems)


@pytest.mark.parametrize("fmt, path", [("mawps", "mawps/MAWPS.json"), ("math23k", "math23k/math23k.json")])
def test_every_shared_dataset_expression_keeps_its_answer(fmt, path):
    if not (SHARED / path).is_file():
        pytest.skip(f"{SHARED / path} is not on this machine")
    _assert_answers_kept(load_dataset(fmt, SHARED / path).problems)
