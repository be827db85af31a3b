"""Problem records: number mapping, build_problem's skip reasons, serialization."""
from fractions import Fraction

import pytest

from mwp.expr import BinOp, Num, Qty
from mwp.parse import parse_expression
from mwp.problem import (
    Problem,
    ProblemError,
    Quantity,
    build_problem,
    map_numbers,
    read_problems_jsonl,
    with_expression,
    write_jsonl,
)


def test_build_problem_maps_numbers_by_order_of_appearance():
    p = build_problem("p1", "Tom has 3 apples. Ann has 5 apples. How many apples do they have?", "x=5-3", 2, "test")
    assert p.sentences[-1] == ("How", "many", "apples", "do", "they", "have", "?")
    assert p.question == p.sentences[-1]
    assert p.values == [3, 5]
    assert [(q.sentence, q.token, q.surface) for q in p.quantities] == [(0, 2, "3"), (1, 2, "5")]
    assert p.quantity_positions() == [2, 7]
    assert p.expression == BinOp("-", Qty(1), Qty(0))
    assert p.prefix() == ["-", "N1", "N0"]
    assert p.answer == 2 and p.provenance.source == "test" and p.language == "en"


def test_a_value_appearing_twice_maps_to_its_first_occurrence():
    p = build_problem("p2", "Tom has 4 red pens and 4 blue pens. He buys 2 more. How many pens?", "x=4+4+2", 10, "t")
    assert p.values == [4, 4, 2]
    assert p.prefix() == ["+", "+", "N0", "N0", "N2"]


def test_constants_are_kept_and_other_missing_numbers_are_a_skip():
    p = build_problem("p3", "A book costs 5 dollars. How many cents is that?", "x=5*100", 500, "t")
    assert p.prefix() == ["*", "N0", "100"]
    with pytest.raises(ProblemError) as info:
        build_problem("p4", "Tom has 3 apples. How many?", "x=3+9", 12, "t")  # 9 is no constant
    assert info.value.reason == "number_missing_from_text"


def test_map_numbers_directly():
    qs = [Quantity(Fraction(6), 0, 0, "6"), Quantity(Fraction(1, 2), 0, 3, "(1/2)"), Quantity(Fraction(6), 1, 0, "6")]
    assert map_numbers(parse_expression("6*(1/2)+1"), qs) == BinOp("+", BinOp("*", Qty(0), Qty(1)), Num(Fraction(1)))
    with pytest.raises(ProblemError):
        map_numbers(parse_expression("6+9"), qs, constants=())


def test_percent_number_words_and_solved_equations():
    p = build_problem("p5", "40% of the 50 students are girls. How many girls are there?", "x=40%*50", 20, "t")
    assert p.prefix() == ["*", "N0", "N1"] and p.values == [Fraction(2, 5), 50]
    p = build_problem("p6", "Tom has five apples and 3 pears. How many fruits?", "x=5+3", 8, "t")
    assert p.prefix() == ["+", "N0", "N1"]
    p = build_problem("p7", "7 times a number plus 4 equals 3 times the number minus 20. What is the number?",
                      "(7*x)+4=(3*x)-20", -6, "t")
    assert p.values == [7, 4, 3, 20]
    assert p.prefix() == ["/", "+", "N1", "N3", "-", "N2", "N0"]  # (4+20)/(3-7)
    assert p.answer == -6


def test_answer_checks():
    with pytest.raises(ProblemError) as info:
        build_problem("p8", "Tom has 0.7 kg and 0.6 kg. How much?", "x=0.7+0.6", 0.1, "t")
    assert info.value.reason == "answer_mismatch"
    # MAWPS prints the answer rounded: 500/6 = 83.333.. shown as 83.33 is accepted, kept exact.
    p = build_problem("p9", "500 candies go into 6 bags. How many per bag?", "x=500.0/6.0", 83.33, "t")
    assert p.answer == Fraction(250, 3)
    # a value beyond the float range is a counted mismatch, not an OverflowError
    with pytest.raises(ProblemError) as info:
        build_problem("p10", "Multiply 10 to the power 300 by itself.", "x=10^300*10^300", 5.5, "t")
    assert info.value.reason == "answer_mismatch" and "about 601 digits" in str(info.value)
    with pytest.raises(ProblemError) as info:
        build_problem("p10", "Tom has 5 apples and 0 bags. How many per bag?", "x=5/0", 1, "t")
    assert info.value.reason == "division_by_zero"
    with pytest.raises(ProblemError) as info:
        build_problem("p11", "Tom has 5 apples.", "x=5", "many", "t")
    assert info.value.reason == "bad_answer"


def test_expression_tree_input_and_with_expression():
    tree = BinOp("*", Num(Fraction(3)), Num(Fraction(4)))
    p = build_problem("p12", "Tom buys 3 pens. Each pen costs 4 dollars. How much does he pay?", tree, Fraction(12), "t")
    assert p.prefix() == ["*", "N0", "N1"] and p.answer == 12
    q = with_expression(p, BinOp("+", Qty(0), Qty(1)))
    assert q.answer == 7 and q.text == p.text


def test_serialization_round_trip(tmp_path):
    p = build_problem("p13", "A cake costs 3.5 dollars. Tom buys 4 cakes. How much?", "x=3.5*4", 14, "t")
    assert Problem.from_dict(p.to_dict()) == p
    write_jsonl([p], tmp_path / "p.jsonl")
    assert read_problems_jsonl(tmp_path / "p.jsonl") == [p]
    assert p.key() == Problem.from_dict(p.to_dict()).key()


def test_origins_follow_parents_through_the_pool_to_round_0():
    from dataclasses import replace

    from mwp.problem import Provenance, origins

    def made(pid, parents, round_):
        base = build_problem(pid, "Tom has 3 apples. How many apples does Tom have?", "x=3", 3, "toy")
        return replace(base, provenance=Provenance("toy", tuple(parents), "geca_op2", round_))

    a = build_problem("a", "Ann has 4 pears. How many pears does Ann have?", "x=4", 4, "toy")
    b = build_problem("b", "Bob has 5 figs. How many figs does Bob have?", "x=5", 5, "toy")
    swap1 = made("s1", ["a"], 1)  # round 1: a renaming of a
    swap2 = made("s2", ["s1"], 2)  # round 2: a renaming of the renaming
    pool = [a, b, swap1, swap2]
    candidates = [made("c1", ["s2"], 3), made("c2", ["s1", "b"], 3), made("c3", ["gone"], 3), a]
    assert origins(candidates, pool) == {"c1": ("a",), "c2": ("a", "b"), "c3": ("gone",), "a": ("a",)}
