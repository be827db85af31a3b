"""The verb-noun licence of noun swaps (tasks/augment/licence.py) on hand-made problems: a noun grown,
picked, baked, eaten or read is swapped only for one the pool's original problems give that verb (or a
verb of its kind); the refusal is counted."""
from dataclasses import replace

from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.geca import geca_op2
from tasks.augment.licence import REASON, attested, verb_objects, verb_refusal
from tasks.augment.substitution import entity_substitution
from tasks.augment.swap import pool_entities, swap_entity

PUMPKINS = "Sara grew 43 pumpkins, but the rabbits ate 23 pumpkins. How many pumpkins does Sara have?"


def farm():
    """pumpkin ~ pencil ~ turnip through "<name> sold <0>"; the pool grows pumpkins and turnips only."""
    return [
        build_problem("p", "Sara grew 43 pumpkins. She sold 23 pumpkins. How many pumpkins does Sara have?",
                      "x=43-23", 20, "toy"),
        build_problem("n", "Tom bought 8 pencils. He sold 3 pencils. How many pencils does Tom have?", "x=8-3", 5, "toy"),
        build_problem("t", "Keith grew 6 turnips. He sold 2 turnips. How many turnips does Keith have?", "x=6-2", 4, "toy"),
    ]


def test_verb_objects_reads_the_verb_before_a_quantity_a_passive_and_a_question():
    assert verb_objects(build_problem("a", PUMPKINS, "x=43-23", 20, "toy")) == {("grow", "pumpkin"), ("eat", "pumpkin")}
    both = build_problem("b", "Jason grew 23 watermelons and 18 turnips. Nancy grew 28 watermelons. "
                              "How many turnips did they grow in total?", "x=18", 18, "toy")
    assert verb_objects(both) == {("grow", "watermelon"), ("grow", "turnip")}
    passive = build_problem("c", "Mia had 30 pies. 12 pies were eaten. How many pies were baked?", "x=30", 30, "toy")
    assert verb_objects(passive) == {("eat", "pie"), ("bake", "pie")}
    # to pick up is to collect: no licence; "has", "buys" select nothing
    assert verb_objects(build_problem("d", "Lino picked up 292 shells. He buys 3 shells. How many shells does he "
                                           "have?", "x=292+3", 295, "toy")) == set()


def test_a_grown_pumpkin_is_never_swapped_to_pencils_and_the_refusal_is_counted():
    problems = farm()
    entities = pool_entities(problems)
    assert entities.alternatives[("noun", "pumpkin")] == {"pencil", "turnip"}  # the environments allow both
    assert entities.takes == {"grow": frozenset({"pumpkin", "turnip"})}
    grown = problems[0]
    out = swap_entity(grown, entities.entity("noun", "pumpkin"), entities.entity("noun", "pencil"), "geca_op2",
                      "", 1, entities.gender, entities.takes)
    assert out == REASON
    kept = swap_entity(grown, entities.entity("noun", "pumpkin"), entities.entity("noun", "turnip"), "geca_op2",
                       "", 1, entities.gender, entities.takes)
    assert kept.text == "Sara grew 43 turnips. She sold 23 turnips. How many turnips does Sara have?"
    # bought pencils select nothing: pencil -> pumpkin is a purchase of pumpkins
    bought = swap_entity(problems[1], entities.entity("noun", "pencil"), entities.entity("noun", "pumpkin"),
                         "geca_op2", "", 1, entities.gender, entities.takes)
    assert bought.text == "Tom bought 8 pumpkins. He sold 3 pumpkins. How many pumpkins does Tom have?"

    batch = geca_op2(problems, AugmentConfig(operators=("geca_op2",)), 0, 1)
    texts = [c.text for c in batch.candidates]
    assert not any("grew" in t and "pencil" in t for t in texts)
    assert "Sara grew 43 turnips. She sold 23 turnips. How many turnips does Sara have?" in texts
    assert "Keith grew 6 turnips. He sold 2 turnips. How many turnips does Keith have?" not in texts
    assert batch.rejected["op2_" + REASON] == 2  # pumpkin -> pencil and turnip -> pencil, each drawn once
    sub = entity_substitution(problems, AugmentConfig(operators=("entity_substitution",), per_problem_cap=3), 0, 1)
    assert not any("grew" in c.text and "pencil" in c.text for c in sub.candidates)


def test_a_crop_verb_takes_what_another_crop_verb_takes_and_only_originals_attest():
    pool = [build_problem("f", "Fred picked 36 limes. How many limes does he have?", "x=36", 36, "toy"),
            build_problem("k", "Keith grew 6 turnips. How many turnips did he grow?", "x=6", 6, "toy")]
    slipped = replace(build_problem("s", "Sam grew 5 candy. How many candy does he have?", "x=5", 5, "toy"))
    slipped = replace(slipped, provenance=replace(slipped.provenance, round=1, operator="geca_op2"))
    takes = attested(pool + [slipped])
    assert takes == {"pick": frozenset({"lime"}), "grow": frozenset({"turnip"})}  # the round-1 swap attests nothing
    grown = build_problem("a", PUMPKINS, "x=43-23", 20, "toy")
    assert verb_refusal(grown, "pumpkin", "turnip", takes) is None  # eat takes what is grown
    assert verb_refusal(grown, "pumpkin", "lime", takes) is None  # a crop picked can be grown
    assert verb_refusal(grown, "pumpkin", "candy", takes) == REASON
    held = build_problem("h", "Sara has 43 pumpkins. How many pumpkins does Sara have?", "x=43", 43, "toy")
    assert verb_refusal(held, "pumpkin", "candy", takes) is None  # "has" selects nothing


def test_a_noun_with_a_bare_of_complement_is_not_swapped():
    """"32 pieces of candy ... ate 35 pieces": "pieces" counts candy, so "cupcakes of candy" would be wrong;
    "ate 3 of the pumpkins" is a partitive, not a complement."""
    halloween = build_problem("h", "Debby had 32 pieces of candy while her sister had 42. If they ate 35 pieces the "
                                   "first night, how many pieces do they have left?", "x=32+42-35", 39, "toy")
    entities = pool_entities([halloween])
    out = swap_entity(halloween, entities.entity("noun", "piece"), entities.entity("noun", "cupcake"), "geca_op2", "",
                      1, entities.gender, entities.takes)
    assert out == "swap_mention_bound_to_its_words"
    partitive = build_problem("r", "Sara grew 43 pumpkins. The rabbits ate 3 of the pumpkins. How many pumpkins does "
                                   "Sara have?", "x=43-3", 40, "toy")
    out = swap_entity(partitive, entities.entity("noun", "pumpkin"), entities.entity("noun", "turnip"), "geca_op2", "",
                      1, entities.gender, {"grow": frozenset({"turnip"}), "eat": frozenset()})
    assert out.text == "Sara grew 43 turnips. The rabbits ate 3 of the turnips. How many turnips does Sara have?"
