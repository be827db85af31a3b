"""Label verification and deduplication."""
from dataclasses import replace
from fractions import Fraction

from mwp.expr import BinOp, Num, Qty
from mwp.problem import build_problem
from tasks.augment.verify import dedupe, rejection_reason, verify


def toy():
    return build_problem("p", "Tom has 6 apples and 3 pears. How many fruits?", "x=6+3", 9, "toy")


def test_a_good_problem_passes_and_its_answer_is_recomputed():
    wrong_answer = replace(toy(), answer=Fraction(100))
    (kept,), rejected = verify([wrong_answer])
    assert kept.answer == 9 and not rejected


def test_division_by_zero_is_rejected():
    p = build_problem("z", "Tom has 6 apples and 0 pears. How many?", "x=6+0", 6, "toy")
    bad = replace(p, expression=BinOp("/", Qty(0), Qty(1)))
    assert rejection_reason(bad) == "division_by_zero"


def test_a_slot_without_its_quantity_is_rejected():
    bad = replace(toy(), expression=BinOp("+", Qty(0), Qty(2)))
    kept, rejected = verify([bad])
    assert kept == [] and rejected == {"missing_quantity": 1}


def test_quantities_must_be_the_numbers_of_the_text():
    p = toy()
    moved = replace(p, quantities=(replace(p.quantities[0], token=1), p.quantities[1]))
    assert rejection_reason(moved) == "quantity_mismatch"


def test_unused_quantities_are_allowed_unless_asked():
    p = replace(toy(), expression=BinOp("*", Qty(0), Num(Fraction(2))))
    assert rejection_reason(p) is None
    assert rejection_reason(p, allow_unused_quantities=False) == "unused_quantity"


def test_negative_answers_are_rejected_by_default():
    p = replace(toy(), expression=BinOp("-", Qty(1), Qty(0)))
    assert rejection_reason(p) == "negative_answer"
    assert rejection_reason(p, reject_negative_answers=False) is None


def test_a_negative_step_is_rejected_even_when_the_answer_is_positive():
    # the composition of the MAWPS SD study: Billy's 17 - 6 crayons, then 52 eaten, then Karen's 639 minus that
    p = build_problem("c", "Karen has 639 crayons. Billy starts with 17 crayons. Jennifer takes 6 away. "
                           "52 are eaten by a hippopotamus. How many more crayons does Karen have than Billy?",
                      "x=639-((17-6)-52)", 680, "toy")
    assert rejection_reason(p) == "negative_step"
    assert rejection_reason(p, reject_negative_answers=False) is None
    fine = build_problem("f", "Karen has 639 crayons. Billy starts with 70 crayons. Jennifer takes 6 away. "
                              "52 are eaten by a hippopotamus. How many more crayons does Karen have than Billy?",
                         "x=639-((70-6)-52)", 627, "toy")
    assert rejection_reason(fine) is None


def test_dedupe_against_pool_and_within_round():
    p = toy()
    same_text_other_id = replace(p, id="other")
    new = build_problem("n", "Tom has 6 apples and 4 pears. How many fruits?", "x=6+4", 10, "toy")
    kept, rejected = dedupe([same_text_other_id, new, replace(new, id="again")], existing=[p])
    assert [k.id for k in kept] == ["n"] and rejected == {"duplicate": 2}


def test_a_number_word_quantity_passes_where_it_still_reads_as_its_number():
    p = build_problem("w", "Tom has 4 apples. Ann has twice as many. How many does Ann have?", "x=4*2", 8, "toy")
    assert [q.surface for q in p.quantities] == ["4", "twice"] and rejection_reason(p) is None
    twice = p.quantities[1]
    as_half = replace(p, quantities=(p.quantities[0], replace(twice, value=Fraction(1, 2))))
    assert rejection_reason(as_half) == "quantity_mismatch"  # "twice" is 2, nothing else
    on_ann = replace(p, quantities=(p.quantities[0], replace(twice, token=0)))
    assert rejection_reason(on_ann) == "quantity_mismatch"  # "Ann" is no number


def test_a_sentence_told_twice_is_rejected():
    # a composition of compositions in the MAWPS-ComDiv study: the donor's event is the host's event again
    p = build_problem("r", "Ralph starts with 7 cards. He finds another 47. He finds another 47. "
                           "17 are eaten by a hippopotamus. How many cards does Ralph have?",
                      "x=((7+47)+47)-17", 84, "toy")
    assert rejection_reason(p) == "repeated_sentence"
    other_number = build_problem("o", "Ralph starts with 7 cards. He finds another 47. He finds another 12. "
                                      "17 are eaten by a hippopotamus. How many cards does Ralph have?",
                                 "x=((7+47)+12)-17", 49, "toy")
    assert rejection_reason(other_number) is None
    kept, rejected = verify([p, other_number])
    assert [k.id for k in kept] == ["o"] and rejected == {"repeated_sentence": 1}
