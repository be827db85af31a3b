"""Operation 1 into a division host: a holding statement ("Sam has 20 cookies in a jar") or an event
statement ("Mary bakes 62 tarts") takes a donor that asks how many are left, and the expressions
compose into a subtraction divided (``/ - N0 N1 N2``); spliced or dangling pairings stay refused."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.geca import geca_op1
from tasks.augment.verify import verify

CFG = AugmentConfig()


def _verified(batch):
    kept, _ = verify(batch.candidates)
    return kept


def test_a_holding_statement_of_a_division_host_takes_a_subtraction_donor():
    host = build_problem("h", "Sam has 20 cookies in a jar. He shares them equally among 4 friends. "
                              "How many cookies does each friend get?", "x=20/4", 5, "toy")
    donor = build_problem("d", "Tom has 30 cookies. He eats 6 cookies. How many cookies will Tom have?",
                          "x=30-6", 24, "toy")
    batch = geca_op1([host, donor], CFG, seed=0, round_=1)
    (new,) = _verified(batch)
    assert new.text == ("Sam has 30 cookies. He eats 6 cookies. He shares them equally among 4 friends. "
                        "How many cookies does each friend get?")
    assert " ".join(to_prefix(new.expression)) == "/ - N0 N1 N2"
    assert new.answer == Fraction(6)  # (30 - 6) / 4
    assert "renamed=Tom->Sam" in new.provenance.detail and "holding" in new.provenance.detail


def test_an_event_statement_takes_a_donor_that_opens_with_the_same_statement():
    host = build_problem("h", "Mary bakes 62 tarts. Mary packs the tarts equally into 2 boxes. "
                              "How many tarts go in each box?", "x=62/2", 31, "toy")
    donor = build_problem("d", "Anna bakes 66 tarts. The family eats 4 of the tarts. How many tarts are left?",
                          "x=66-4", 62, "toy")
    (new,) = _verified(geca_op1([host, donor], CFG, seed=0, round_=1))
    assert new.text == ("Mary bakes 66 tarts. The family eats 4 of the tarts. Mary packs the tarts equally into "
                        "2 boxes. How many tarts go in each box?")
    assert " ".join(to_prefix(new.expression)) == "/ - N0 N1 N2" and new.answer == Fraction(31)


def test_incoherent_pairings_stay_refused():
    # A spliced host: it bakes buns and packs cupcakes it never stated.
    spliced = build_problem("s", "Emma bakes 20 buns. Emma packs the cupcakes equally into 2 boxes. "
                                 "How many cupcakes go in each box?", "x=20/2", 10, "toy")
    buns = build_problem("b", "Emma bakes 26 buns. The family eats 6 of the buns. How many buns are left?",
                         "x=26-6", 20, "toy")
    batch = geca_op1([spliced, buns], CFG, seed=0, round_=1)
    assert batch.candidates == [] and batch.rejected["op1_host_question_not_about_its_narrative"] == 1
    # The dropped modifier is referred to later: "at a school" ... "at the school".
    school = build_problem("c", "There are 390 students at a school. If each classroom holds 30 students, how many "
                                "classrooms are needed at the school?", "x=390/30", 13, "toy")
    students = build_problem("t", "There are 400 students. 10 students go home. How many students are left?",
                             "x=400-10", 390, "toy")
    batch = geca_op1([school, students], CFG, seed=0, round_=1)
    assert batch.candidates == [] and batch.rejected["op1_host_refers_to_the_dropped_modifier"] == 1
    # The donor opens with Peter's tarts and asks about Joan's.
    tarts = build_problem("m", "Mary bakes 62 tarts. Mary packs the tarts equally into 2 boxes. "
                               "How many tarts go in each box?", "x=62/2", 31, "toy")
    joan = build_problem("j", "Peter bakes 96 tarts. Joan buys 3 more tarts at the bakery. How many tarts does "
                              "Joan have now?", "x=96+3", 99, "toy")
    batch = geca_op1([tarts, joan], CFG, seed=0, round_=1)
    assert batch.candidates == [] and batch.rejected["op1_donor_question_not_about_its_opening"] >= 1
