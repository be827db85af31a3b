"""Operation 1 does not spend a host's cap on a text already made: a donor's name-swapped twin (operation 2
makes such twins in every round) told of the host's holder composes the donor's own text, and a composition
kept in an earlier round is in the pool. Each is counted (``op1_text_made_already``) and the host goes on
drawing, where before it made the copy and the round's dedupe dropped it after the cap was spent."""
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.geca import geca_op1

HOST = build_problem("h", "Willy has 1400 crayons. Lucy has 290 crayons. How many more crayons does Willy have than "
                     "Lucy?", "x=1400-290", 1110, "toy")
WANDA = build_problem("d1", "Wanda has 4 crayons. Theresa gives Wanda 79 more. How many crayons does Wanda have in "
                      "all?", "x=4+79", 83, "toy")
MARIA = build_problem("d2", "Maria has 4 crayons. Theresa gives Maria 79 more. How many crayons does Maria have in "
                      "all?", "x=4+79", 83, "toy")  # WANDA with another name: told of Lucy, the same text
BOB = build_problem("d3", "Bob has 7 crayons. He finds 5 more. How many crayons does Bob have in all?", "x=7+5", 12,
                    "toy")
TWIN_TEXT = ("Willy has 1400 crayons. Lucy has 4 crayons. Theresa gives Lucy 79 more. How many more crayons does "
             "Willy have than Lucy?")


def _of_host(pool, seed, cap):
    batch = geca_op1(pool, AugmentConfig(per_problem_cap=cap), seed=seed, round_=1)
    return batch, [c for c in batch.candidates if c.provenance.parents[0] == "h"]


def test_twin_donors_compose_one_text_once_and_the_cap_goes_to_other_donors():
    counted = 0
    for seed in range(8):
        batch, mine = _of_host([HOST, WANDA, MARIA, BOB], seed, cap=3)
        assert len({c.key() for c in mine}) == len(mine), seed  # no copy made
        assert [c.text for c in mine].count(TWIN_TEXT) <= 1
        counted += batch.rejected["op1_text_made_already"]
    assert counted >= 8  # every seed draws both twins for Lucy's clause


def test_a_composition_already_in_the_pool_is_not_made_again():
    kept = build_problem("k", "Willy has 1400 crayons. Lucy has 7 crayons. She finds 5 more. How many more crayons does "
                         "Willy have than Lucy?", "x=1400-(7+5)", 1388, "toy")
    for seed in range(4):
        batch, mine = _of_host([HOST, BOB, kept], seed, cap=3)
        assert kept.key() not in {c.key() for c in mine}
        assert batch.rejected["op1_text_made_already"] >= 1
