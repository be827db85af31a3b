"""No held-out problem reaches training: a candidate equal to a validation or test problem by text, by
quantities + expression, or by its clause set (SD) is dropped and counted per set."""
from dataclasses import replace

from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.generate import generate_candidates
from tasks.augment.leakage import HeldOut


def test_each_form_of_a_held_out_problem_is_found_and_counted_by_set():
    valid = build_problem("v", "Tom has 3 apples. He buys 4 apples. How many apples does Tom have?", "x=3+4", 7, "t")
    test = build_problem("t", "There are 36 peaches, each box holds 4 peaches. How many boxes are needed?",
                         "x=36/4", 9, "t")
    index = HeldOut.build({"valid": [valid], "comdiv": [test]})
    same_text = replace(valid, id="c1")
    reworded = build_problem("c2", "Ann owns 4 pears and 3 pears. How many pears in all?", "x=4+3", 7, "t")  # 3+4 = 4+3
    reordered = build_problem("c3", "Each box holds 4 peaches, there are 36 peaches. How many boxes are needed?",
                              "x=36/4", 9, "t")  # SD's parts put back in another clause order
    fresh = build_problem("c4", "Ann owns 5 pears and 3 pears. How many pears in all?", "x=5+3", 8, "t")
    assert index.match(same_text) == "valid" and index.match(reworded) == "valid"
    assert index.match(reordered) == "comdiv" and index.match(fresh) is None
    kept, rejected = index.drop_matches([same_text, reworded, reordered, fresh])
    assert [p.id for p in kept] == ["c4"] and rejected == {"matches_valid": 2, "matches_comdiv": 1}


def test_generation_drops_a_candidate_that_rebuilds_a_test_problem():
    donor = build_problem("q", "Tom picked 20 peaches, he picked 16 more peaches. How many peaches are there?",
                          "x=20+16", 36, "toy")
    host = build_problem("q2", "There are 36 peaches, each box holds 4 peaches. How many boxes are needed?",
                         "x=36/4", 9, "toy")
    composed = build_problem("t", "Tom picked 20 peaches, he picked 16 more peaches, each box holds 4 peaches. "
                                  "How many boxes are needed?", "x=(20+16)/4", 9, "toy")
    config = AugmentConfig(operators=("geca_op1",))
    free = generate_candidates([donor, host], config, 1)
    assert [c.text for c in free.candidates] == [composed.text]
    guarded = generate_candidates([donor, host], config, 1, HeldOut.build({"comdiv": [composed]}))
    assert guarded.candidates == [] and guarded.rejected["matches_comdiv"] == 1
