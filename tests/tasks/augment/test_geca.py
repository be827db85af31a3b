"""Operations 1 and 2 on hand-built problems: composition only where the question asks for what the
statement states, swaps that leave no trace of the replaced entity."""
from dataclasses import replace
from fractions import Fraction

from mwp.expr import to_infix
from mwp.problem import Provenance, build_problem
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.consistency import consistency_reason
from tasks.augment.entities import predicate, question_entity, quantity_entity
from tasks.augment.geca import geca_op1, geca_op2, operation1
from tasks.augment.swap import Entity, pool_entities, swap_entity
from tasks.augment.verify import verify

CFG = AugmentConfig()


def peaches():
    """Figure 3a: q asks "how many peaches", q' states "There are 36 peaches"."""
    q = build_problem("q", "Tom picked 20 peaches, he picked 16 more peaches. How many peaches are there?",
                      "x=20+16", 36, "toy")
    q2 = build_problem("q2", "There are 36 peaches, each box holds 4 peaches. How many boxes are needed?",
                       "x=36/4", 9, "toy")
    return q, q2


def test_entities_of_quantities_and_questions_are_read_and_folded():
    q, q2 = peaches()
    assert [quantity_entity(q, j) for j in range(2)] == ["peach", "peach"]
    assert question_entity(q) == "peach" and question_entity(q2) == "box"
    flour = build_problem("f", "Mia used 3 cups of flour. How many cups of flour did she use?", "x=3", 3, "toy")
    assert quantity_entity(flour, 0) == "cup:flour" and question_entity(flour) == "cup:flour"
    passed = build_problem("p", "Of 40 students in a class, 28 passed. How many failed?", "x=40-28", 12, "toy")
    assert quantity_entity(passed, 1) is None  # "28 passed": a verb, not a counted noun
    units = clause_units(q2)
    assert predicate(q2.tokens, *units.spans[0], "peach") == {"be"}
    assert predicate(q.tokens, *units.spans[-1], "peach") == {"be"}  # "How many peaches are there?"


def test_operation1_composes_the_donor_narrative_with_the_right_expression():
    q, q2 = peaches()
    new = operation1(q2, clause_units(q2), 0, q, clause_units(q), "fig3a", 1)
    assert new.text == "Tom picked 20 peaches, he picked 16 more peaches, each box holds 4 peaches. How many boxes are needed?"
    assert to_infix(new.expression) == "(N0+N1)/N2"
    (checked,), rejected = verify([new])
    assert checked.answer == Fraction(9) and not rejected
    assert new.provenance.parents == ("q2", "q") and new.provenance.operator == "geca_op1"


def test_operation1_refuses_a_clause_whose_value_is_twice_in_the_host():
    # MAWPS's "2+2" becomes N0 + N0 (a number maps to its first quantity), so replacing Michelle's 2
    # would replace Janet's too: (4*10) + (4*10) instead of (4*10) + 2.
    host = build_problem("h", "Michelle has 2 crayons. Janet has 2 crayons. If Janet gives all of her crayons to "
                              "Michelle, how many crayons will Michelle have?", "x=2+2", 4, "toy")
    donor = build_problem("d", "Michelle has 4 packs of crayons. Each pack has 10 crayons in it. "
                               "How many crayons does Michelle have?", "x=4*10", 40, "toy")
    assert to_infix(host.expression) == "N0+N0"
    assert operation1(host, clause_units(host), 0, donor, clause_units(donor), "twice", 1) == "op1_value_twice_in_text"
    distinct = build_problem("h2", "Michelle has 3 crayons. Janet has 2 crayons. If Janet gives all of her crayons "
                                   "to Michelle, how many crayons will Michelle have?", "x=3+2", 5, "toy")
    new = operation1(distinct, clause_units(distinct), 0, donor, clause_units(donor), "once", 1)
    (checked,), rejected = verify([new])
    assert to_infix(new.expression) == "N0*N1+N2" and checked.answer == Fraction(42) and not rejected


def test_the_operator_composes_a_pair_that_shares_the_entity_and_what_is_said_of_it():
    q, q2 = peaches()
    batch = geca_op1([q, q2], CFG, seed=0, round_=1)
    texts = [c.text for c in batch.candidates]
    assert texts == ["Tom picked 20 peaches, he picked 16 more peaches, each box holds 4 peaches. "
                     "How many boxes are needed?"]


def test_the_operator_refuses_a_pair_without_a_shared_entity():
    # The example: a question about Emma's age composed into "The kitchen is 7 meters wide".
    age = build_problem("a", "Benny is 12 years old. Emma is 30 years older than Benny. How old is Emma?",
                        "x=12+30", 42, "toy")
    carpet = build_problem("c", "The kitchen is 7 meters wide, it is 4 meters long. Carpet costs 28 dollars per "
                           "square meter. How many dollars does the carpet for the kitchen cost?", "x=7*4*28", 784, "toy")
    batch = geca_op1([age, carpet], CFG, seed=0, round_=1)
    assert batch.candidates == []  # years, meters and dollars: no statement counts what a question asks
    # Same entity, but the question asks about another thing than the statement states.
    sold = build_problem("s", "A shop sold 12 plums. How many plums were left over?", "x=12", 12, "toy")
    left = build_problem("l", "Mary has 30 plums, she sells 5 plums. How many plums does Mary have?",
                         "x=30-5", 25, "toy")
    batch = geca_op1([sold, left], CFG, seed=0, round_=1)
    assert batch.candidates == [] and batch.rejected["op1_question_asks_another_thing"] >= 1


def test_a_donor_asking_for_change_is_refused_change_is_not_money_gained():
    # MAWPS 2255's narrative put where a host says its holder got money: the label added the change
    donor = build_problem("d", "Mary paid $ 9 for a book and $ 4 for a pen with a $ 20 bill. How much change did "
                               "Mary get?", "x=20-9-4", 7, "toy")
    host = build_problem("h", "Mary had 5 dollars. She got another 7 dollars from her mom. How much money does "
                              "Mary have now?", "x=5+7", 12, "toy")
    batch = geca_op1([host, donor], CFG, seed=0, round_=1)
    assert batch.candidates == [] and batch.rejected["op1_donor_asks_for_change"] == 1


def test_the_operator_renames_the_donor_protagonist_to_the_hosts_holder_of_the_same_gender():
    donor = build_problem("d", "Sandy picked 6 pears, she picked 5 more pears. How many pears does Sandy have?",
                          "x=6+5", 11, "toy")
    host = build_problem("h", "Mary has 20 pears, she gives 4 pears to Tom. How many pears does Mary have now?",
                         "x=20-4", 16, "toy")
    batch = geca_op1([donor, host], CFG, seed=0, round_=1)
    (mary,) = [c for c in batch.candidates if c.provenance.parents == ("h", "d")]
    assert mary.text == ("Mary picked 6 pears, she picked 5 more pears, she gives 4 pears to Tom. "
                         "How many pears does Mary have now?")
    assert "renamed=Sandy->Mary" in mary.provenance.detail
    # The other way round, "Sandy picked 6 pears" came by what the question asks she has: Mary's narrative
    # (renamed) stands for it.
    (sandy,) = [c for c in batch.candidates if c.provenance.parents == ("d", "h")]
    assert sandy.text == ("Sandy has 20 pears, she gives 4 pears to Tom, she picked 5 more pears. "
                          "How many pears does Sandy have?")


def test_operation2_swaps_an_entity_everywhere_and_leaves_no_trace():
    p = build_problem("p", "Alyssa has 129 cookies. Aiyanna has 140 cookies. How many more cookies does Aiyanna have "
                           "than Alyssa?", "x=140-129", 11, "toy")
    new = swap_entity(p, Entity("noun", "cookie", "cookie", "cookies"), Entity("noun", "worksheet", "worksheet",
                      "worksheets"), "geca_op2", "noun: cookie -> worksheet", 1)
    assert new.text == ("Alyssa has 129 worksheets. Aiyanna has 140 worksheets. How many more worksheets does "
                        "Aiyanna have than Alyssa?")
    assert new.expression == p.expression
    (new,), _ = verify([new])
    assert new.answer == 11 and consistency_reason(new, [p]) is None
    name = swap_entity(p, Entity("name", "Alyssa"), Entity("name", "Maria"), "geca_op2", "name: Alyssa -> Maria", 1)
    assert "Alyssa" not in name.text and name.text.count("Maria") == 2
    assert swap_entity(p, Entity("name", "Alyssa"), Entity("name", "Aiyanna"), "geca_op2", "", 1) == \
        "swap_target_already_in_problem"  # two people would become one


def test_a_swap_that_left_the_old_entity_behind_is_refused_by_the_checks():
    p = build_problem("p", "Alyssa has 129 cookies. How many cookies does Alyssa have?", "x=129", 129, "toy")
    half = build_problem("h", "Alyssa has 129 worksheets. How many cookies does Alyssa have?", "x=129", 129, "toy")
    half = replace(half, provenance=Provenance("toy", ("p",), "geca_op2", 1, "noun: cookie -> worksheet"))
    (half,), _ = verify([half])
    assert consistency_reason(half, [p]) in ("check_orphan_entity", "check_question_entity_not_stated")


def test_a_name_the_original_pool_calls_both_genders_stays_unknown_and_kept_swaps_do_not_vote():
    """MAWPS has "Harold has 53 marbles. He ..." and "Harold split 15 apples ... her class": the pool's
    first vote once made Harold female, and a kept "Harold has 57 bananas. She finds another 95" followed."""
    he = build_problem("h", "Harold has 53 marbles. He gets 16 more from the store. How many marbles does Harold "
                            "have?", "x=53+16", 69, "toy")
    her = build_problem("s", "Harold split 15 apples between 3 people in her class. How many apples did each get?",
                        "x=15/3", 5, "toy")
    gwen = build_problem("g", "Gwen has 9 pens. She buys 3 more. How many pens does Gwen have?", "x=9+3", 12, "toy")
    assert pool_entities([he, gwen]).gender == {"Harold": "m", "Gwen": "f"}
    for order in ([he, her, gwen], [her, he, gwen]):
        genders = pool_entities(order).gender
        assert "Harold" not in genders and genders["Gwen"] == "f"
        assert swap_entity(gwen, Entity("name", "Gwen"), Entity("name", "Harold"), "geca_op2", "", 1, genders) == \
            "swap_name_gender_unknown_or_differs"
    wrong = replace(build_problem("w", "Harold has 9 pens. She buys 3 more. How many pens does Harold have?", "x=9+3",
                                  12, "toy"), provenance=Provenance("toy", ("g",), "geca_op2", 1, "name: Gwen -> Harold"))
    assert "Harold" not in pool_entities([wrong, gwen]).gender  # an augmented problem does not vote
    assert pool_entities([he, gwen], {"Harold": "f"}).gender["Harold"] == "f"  # the lexicon wins


def test_the_op2_operator_swaps_alternatives_the_pool_shows_in_a_common_environment():
    a = build_problem("a", "Tom picked 5 apples. How many apples did Tom pick?", "x=5", 5, "toy")
    b = build_problem("b", "Ann picked 7 pears. How many pears did Ann pick?", "x=7", 7, "toy")
    batch = geca_op2([a, b], AugmentConfig(per_problem_cap=4), seed=0, round_=1)
    texts = {c.text for c in batch.candidates}
    assert "Tom picked 5 pears. How many pears did Tom pick?" in texts
    assert "Ann picked 7 apples. How many apples did Ann pick?" in texts
    assert all(c.expression == (a if c.provenance.parents == ("a",) else b).expression for c in batch.candidates)


def test_a_candidate_that_cannot_be_checked_is_refused_by_reason_never_kept():
    from tasks.augment.consistency import check_candidates

    p = build_problem("p", "Tom has 3 apples and 4 pears. Which fruit is more?", "x=4-3", 1, "toy")
    odd = replace(build_problem("c", "Ann has 3 apples and 4 pears. Which fruit is more?", "x=4-3", 1, "toy"),
                  provenance=Provenance("toy", ("p",), "geca_op2", 1, "name: Tom -> Ann"))
    kept, rejected = check_candidates([odd], {"p": p})
    assert kept == [] and rejected == {"check_question_unreadable": 1}
    orphan = replace(odd, provenance=Provenance("toy", ("gone",), "geca_op2", 1, "name: Tom -> Ann"))
    assert check_candidates([orphan], {"p": p})[1] == {"check_parent_missing": 1}


def test_a_lone_chinese_problem_is_read_and_counted_by_reason():
    zh = build_problem("z", "小明有3个苹果，又买了2个苹果，小明有多少个苹果？", "x=3+2", 5, "toy", "zh")
    # "又买了2个苹果" leans on the clause before it, which it therefore may not lose to a narrative: neither
    # statement can be replaced, each counted once, and the host has no statement left
    assert geca_op1([zh], CFG, 0, 1).rejected == {"op1_zh_next_clause_leans_on_the_statement": 1,
                                                  "op1_zh_statement_leans_on_the_clause_before": 1,
                                                  "op1_no_statement_with_a_donor": 1}
    assert geca_op2([zh], CFG, 0, 1).rejected == {"op2_no_alternative": 1}
