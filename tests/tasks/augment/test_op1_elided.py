"""English questions that leave their entity out ("How many are left?") are read, for operation 1's donors, as
asking for the one entity every quantity of the text counts, when the expression only adds and subtracts (for
op1's hosts too: test_op1_pass3.py); swaps and the checks of other operators leave them unreadable. A donor
asking what there was before its events is refused."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.entities import question_entity
from tasks.augment.geca import geca_op1
from tasks.augment.verify import verify


def test_an_elided_question_entity_is_the_one_entity_of_a_sum_or_difference():
    def asked(text, equation, answer, elided=True):
        return question_entity(build_problem("p", text, equation, answer, "toy"), elided)
    assert asked("There are 22 oranges in a box. Paula takes 7 oranges. How many are left?", "x=22-7", 15,
                 elided=False) is None  # the default reading, as before
    assert asked("There are 22 oranges in a box. Paula takes 7 oranges. How many are left?", "x=22-7", 15) == "orange"
    assert asked("Carla has some marbles. She bought 489 marbles. Now she has 2778 marbles. How many did she start "
                 "with?", "x=2778-489", 2289) == "marble"
    # A division counts something else: "4 tickets a piece, how many could he buy?" asks for candy.
    assert asked("Edward won 3 tickets and 5 tickets. If candy costs 4 tickets a piece, how many could he buy?",
                 "x=(3+5)/4", 2) is None
    # Two entities: which one?
    assert asked("Dan had 14 peaches and 10 pears. He ate 3 peaches. How many are left?", "x=14-3", 11) is None


def test_an_elided_donor_question_composes_and_a_donor_asking_the_start_is_refused():
    host = build_problem("h", "There are 41 pencils in the drawer. Eric takes 4 pencils. How many pencils are left?",
                         "x=41-4", 37, "toy")
    donor = build_problem("d", "There are 27 pencils in the drawer. Nancy placed 45 pencils in the drawer. "
                          "How many are there now?", "x=27+45", 72, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    kept, _ = verify(batch.candidates)
    (new,) = [c for c in kept if c.provenance.parents == ("h", "d")]
    assert new.text == ("There are 27 pencils in the drawer. Nancy placed 45 pencils in the drawer. Eric takes 4 "
                        "pencils. How many pencils are left?")
    assert " ".join(to_prefix(new.expression)) == "- + N0 N1 N2" and new.answer == Fraction(68)
    # The same problem as a host is read too (test_op1_pass3.py): its opening takes the narrative that opens with it.
    batch = geca_op1([donor, host], AugmentConfig(), seed=0, round_=1)
    kept, _ = verify(batch.candidates)
    (new,) = [c for c in kept if c.provenance.parents == ("d", "h")]
    assert new.text == ("There are 41 pencils in the drawer. Eric takes 4 pencils. Nancy placed 45 pencils in the "
                        "drawer. How many are there now?")
    assert " ".join(to_prefix(new.expression)) == "+ - N0 N1 N2" and new.answer == Fraction(82)
    assert batch.rejected["op1_host_question_not_about_its_narrative"] == 0
    # "Now she has 2778" ends after the amount the question asks: it cannot stand for "Jack starts with 50".
    host = build_problem("h", "Jack starts with 50 marbles. He shares 33 with Rebecca. How many marbles does Jack end "
                         "with?", "x=50-33", 17, "toy")
    donor = build_problem("d", "Carla has some marbles. She bought 489 marbles. Now she has 2778 marbles. How many did "
                          "she start with?", "x=2778-489", 2289, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    assert not [c for c in batch.candidates if c.provenance.parents == ("h", "d")]
    assert batch.rejected["op1_donor_asks_what_came_before"] == 1
