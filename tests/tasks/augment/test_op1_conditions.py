"""Operation 1 (English) takes donors whose question opens with a condition ("If he threw away 4 socks
..., how many socks would he have?"): the condition is told as a statement of the donor's narrative, the
question's "would" as "will"; quantities, expression and answer unchanged. Conditions that are not a
leading "If ..., " stay refused."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.en_conditional import declarative_donor
from tasks.augment.geca import geca_op1
from tasks.augment.verify import verify

CONDITIONAL = ("George had 28 socks. If he threw away 4 socks and bought 36 new socks, "
               "how many socks would he have?")


def test_a_leading_condition_is_told_as_a_statement():
    donor = build_problem("d", CONDITIONAL, "x=28-4+36", 60, "toy")
    told = declarative_donor(donor)
    assert told.text == ("George had 28 socks. He threw away 4 socks and bought 36 new socks. "
                         "How many socks will he have?")
    assert told.id == "d" and told.values == donor.values and told.answer == Fraction(60)
    assert " ".join(to_prefix(told.expression)) == " ".join(to_prefix(donor.expression)) == "+ - N0 N1 N2"
    assert donor.quantity_positions() == [2, 9, 13]
    assert told.quantity_positions() == [2, 8, 12]  # "If" gone: the later quantities move one token left


def test_other_conditions_are_left_as_they_are():
    for text, eq, answer in (("George had 28 socks. He threw away 4 socks. How many socks does he have?", "x=28-4", 24),
                             ("How much would each can cost if 12 cans cost 3 dollars?", "x=3/12", 0.25),
                             ("George had 28 socks. If, when he moved, he lost 4 socks, how many socks would he have?",
                              "x=28-4", 24)):
        assert declarative_donor(build_problem("d", text, eq, answer, "toy")) is None


def test_a_conditional_donor_composes_into_a_holding_and_is_renamed():
    host = build_problem("h", "Sam has 20 socks. He gives 5 socks to Ann. How many socks does Sam have now?",
                         "x=20-5", 15, "toy")
    donor = build_problem("d", CONDITIONAL, "x=28-4+36", 60, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    kept, _ = verify(batch.candidates)
    (new,) = [c for c in kept if c.provenance.parents == ("h", "d")]
    assert new.text == ("Sam had 28 socks. He threw away 4 socks and bought 36 new socks. He gives 5 socks to "
                        "Ann. How many socks does Sam have now?")
    assert " ".join(to_prefix(new.expression)) == "- + - N0 N1 N2 N3" and new.answer == Fraction(55)
    assert "condition-told" in new.provenance.detail and "renamed=George->Sam" in new.provenance.detail


def test_an_outcome_statement_and_a_repeat_of_the_asked_event_are_refused():
    host = build_problem("h", "Mike has 35 books. He buys some books at a yard sale. He now has 56 books. "
                         "How many books did he buy?", "x=56-35", 21, "toy")
    donor = build_problem("d", "Bryan had 12 books. If he bought 9 books, how many books would Bryan have?",
                          "x=12+9", 21, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    assert not [c for c in batch.candidates if c.provenance.parents == ("h", "d")]
    assert batch.rejected["op1_statement_is_what_is_left"] == 1  # "He now has 56 books": the host's own outcome
    # "Mike had 12 books. He bought 9 books. He buys some books ... How many books did he buy?": which purchase?
    assert batch.rejected["op1_donor_repeats_the_asked_event"] == 1


def test_a_condition_of_the_host_and_a_holding_after_an_earlier_amount_are_not_replaced():
    # "If he works for 8 hours," replaced would read "Fred worked 8 hours ..., how much money will he make?"
    host = build_problem("h", "Fred earns 12 dollars an hour. If he works for 8 hours, how much money will he make?",
                         "x=12*8", 96, "toy")
    donor = build_problem("d", "Frank worked 2 hours on each of 4 days. How many hours did he work in all?",
                          "x=2*4", 8, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    assert not batch.candidates and batch.rejected["op1_statement_is_a_condition"] == 1
    # "Sally had 27 cards. Dan gave her 41. Sally has 72 cards. 61 are eaten ...": 72 reads as her total.
    host = build_problem("h", "Sally had 27 cards. Dan gave her 41 new cards. Sally bought 20 cards. How many cards "
                         "does Sally have now?", "x=27+41+20", 88, "toy")
    donor = build_problem("d", "Jennifer has 72 cards. 61 are eaten by a hippopotamus. How many cards will Jennifer "
                          "have?", "x=72-61", 11, "toy")
    batch = geca_op1([host, donor], AugmentConfig(), seed=0, round_=1)
    assert not [c for c in batch.candidates if "clause=2" in c.provenance.detail]
    # (The donor as a host takes Sally's narrative, renamed Jennifer: its own composition, not checked here.)
    made = [c.text for c in batch.candidates if c.provenance.parents == ("h", "d")]
    assert made == ["Sally has 72 cards. 61 are eaten by a hippopotamus. Dan gave her 41 new cards. Sally bought 20 "
                    "cards. How many cards does Sally have now?"]
