"""Fragments, environments, alternatives and operations 1 and 2 on hand-built problems."""
from fractions import Fraction

from mwp.expr import to_infix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.geca import geca_op1, geca_op2, operation1, operation2
from tasks.augment.geca_index import alternatives, build_index, environment, fragments, skeleton
from tasks.augment.verify import verify

CFG = AugmentConfig()


def peaches():
    q = build_problem("q", "There are 12 apples, the number of peaches is 3 times of number of apples. "
                           "How many peaches?", "x=12*3", 36, "toy")
    q2 = build_problem("q2", "There are 36 peaches, the number of pears is 2. "
                             "What is the ratio of peaches and pears?", "x=36/2", 18, "toy")
    return q, q2


def test_skeleton_drops_quantities_and_final_punctuation():
    q, q2 = peaches()
    assert skeleton(clause_units(q2), 0) == (("There", "are", "peaches"), (0, 0, 1))
    assert skeleton(clause_units(q), 2) == (("How", "many", "peaches"), (0, 0, 0))


def test_fragments_of_a_three_token_skeleton_by_hand():
    got = fragments(("a", "b", "c"), (0, 0, 0), max_spans=2, max_span_len=4)
    # 3 + 2 + 1 single spans, and one two-span fragment (a)(c) with a gap of one token.
    assert len(got) == 7
    assert ((("a",), ("c",)), ("<0>", "b", "<1>")) in got
    assert ((("b", "c"),), ("a", "<0>")) in got
    # a span never crosses a removed quantity (segment change)
    assert ((("a", "b"),), ("<0>", "c")) not in fragments(("a", "b", "c"), (0, 1, 1))


def test_alternatives_come_from_shared_environments():
    q, q2 = peaches()
    index = build_index([q, q2], CFG)
    assert alternatives(index, (("How", "many"),)) == {(("There", "are"),)}
    assert alternatives(index, (("peaches",),)) == {(("apples",),)}  # "There are _" in both problems
    assert environment(("There", "are", "peaches"), ((0, 2),)) == ("<0>", "peaches")


def test_operation1_peaches_example_by_hand():
    q, q2 = peaches()
    new = operation1(q2, clause_units(q2), 0, q, clause_units(q), "fig3a", 1)
    assert new.text == ("There are 12 apples, the number of peaches is 3 times of number of apples, "
                        "the number of pears is 2. What is the ratio of peaches and pears?")
    assert to_infix(new.expression) == "N0*N1/N2"
    assert [q.value for q in new.quantities] == [12, 3, 2]
    assert [(q.sentence, q.token) for q in new.quantities] == [(0, 2), (0, 10), (0, 22)]
    (checked,), rejected = verify([new])
    assert checked.answer == Fraction(18) and not rejected
    assert new.provenance.parents == ("q2", "q") and new.provenance.operator == "geca_op1"


def test_operation1_found_by_the_operator_with_provenance():
    q, q2 = peaches()
    batch = geca_op1([q, q2], CFG, seed=0, round_=3)
    assert len(batch.candidates) == 1
    prov = batch.candidates[0].provenance
    assert prov.round == 3 and prov.parents == ("q2", "q")
    assert "f_donor='How many'" in prov.detail and "f_host='There are'" in prov.detail
    assert batch.rejected["op1_no_shared_environment"] == 1  # q as host: its clauses meet no donor


def test_operation1_refuses_a_clause_without_exactly_one_used_quantity():
    q, q2 = peaches()
    assert operation1(q2, clause_units(q2), 2, q, clause_units(q), "", 1) == "op1_question_clause"
    two = build_problem("t", "There are 3 and 4 peaches. How many?", "x=3+4", 7, "toy")
    assert operation1(two, clause_units(two), 0, q, clause_units(q), "", 1) == "op1_clause_not_one_used_quantity"


def test_operation2_replaces_every_occurrence_and_keeps_the_expression():
    p = build_problem("p", "The price of one peach is 3 dollars, the price of one pear is 1.5 dollars. "
                           "What is the ratio of prices of one peach and one pear?", "x=3/1.5", 2, "toy")
    new = operation2(p, clause_units(p), (("peach",),), (("notebook",),), "fig3b", 1)
    assert new.text == ("The price of one notebook is 3 dollars, the price of one pear is 1.5 dollars. "
                        "What is the ratio of prices of one notebook and one pear?")
    assert new.expression == p.expression and [q.value for q in new.quantities] == [3, Fraction(3, 2)]
    assert operation2(p, clause_units(p), (("kiwi",),), (("fig",),), "", 1) == "op2_fragment_not_found"


def test_operation2_operator_uses_statement_alternatives_only():
    q, q2 = peaches()
    batch = geca_op2([q, q2], CFG, seed=0, round_=1)
    texts = [c.text for c in batch.candidates]
    assert "There are 36 apples, the number of pears is 2. What is the ratio of apples and pears?" in texts
    assert not any(t.startswith("How many 36") for t in texts)  # a question fragment is never f2


def test_two_span_environment_is_capped_per_clause():
    p = build_problem("p", "a b c d e f g h i j k l m n o has 3 cats. How many?", "x=3", 3, "toy")
    small = build_index([p, p], AugmentConfig(max_envs_per_sentence=5))
    big = build_index([p, p], AugmentConfig(max_envs_per_sentence=500))
    assert small.n_hashed < big.n_hashed
