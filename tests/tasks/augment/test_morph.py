"""English morphology from lemminflect: the folds the entity rules and swaps rely on, checked by hand."""
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import consistency_reason
from tasks.augment.entities import entity_key, predicate, predicates_agree, quantity_entity
from tasks.augment.generate import generate_candidates
from tasks.augment.morph import lemma, plural, singular
from tasks.augment.swap import Entity, pool_entities, swap_entity
from tasks.augment.verify import verify


def test_nouns_fold_to_one_key_in_both_numbers():
    for one, many in [("cookie", "cookies"), ("shelf", "shelves"), ("bus", "buses"), ("child", "children"),
                      ("foot", "feet"), ("peach", "peaches"), ("berry", "berries"), ("tomato", "tomatoes")]:
        assert entity_key(one) == entity_key(many) == one, (one, many)
        assert plural(one) == many
    assert singular("Cookies") == "cookie" and plural("sheep") == "sheep" and plural("die") == "dice"


def test_verbs_fold_to_their_lemma_so_predicates_agree():
    for a, b in [("makes", "make"), ("gives", "give"), ("bakes", "bake"), ("takes", "take"), ("made", "make"),
                 ("bought", "buy"), ("has", "have")]:
        assert lemma(a) == lemma(b) == b, (a, b)
    s = build_problem("s", "Tom makes 12 pies. How many pies are there?", "x=12", 12, "toy")
    q = build_problem("q", "Ann has 3 pies. How many pies does Tom make?", "x=3", 3, "toy")
    statement = predicate(s.tokens, 0, 5, "pie")
    question = predicate(q.tokens, 6, len(q.tokens), "pie")
    assert statement == {"make"} and question == {"make"} and predicates_agree(statement, question)


def test_the_cookie_swap_replaces_every_form_and_the_checks_pass_it():
    p = build_problem("p", "Sam baked 12 cookies. Each cookie costs 2 dollars. How much money did Sam make?",
                      "x=12*2", 24, "toy")
    assert quantity_entity(p, 0) == "cookie"
    new = swap_entity(p, Entity("noun", "cookie", "cookie", "cookies"), Entity("noun", "muffin", "muffin", "muffins"),
                      "geca_op2", "noun: cookie -> muffin", 1)
    assert new.text == "Sam baked 12 muffins. Each muffin costs 2 dollars. How much money did Sam make?"
    (new,), _ = verify([new])
    assert consistency_reason(new, [p]) is None
    # The same swap drawn by the operator from a pool that licenses cookie ~ muffin.
    other = build_problem("o", "Sam baked 5 muffins. How many muffins did Sam bake?", "x=5", 5, "toy")
    entities = pool_entities([p, other])
    assert "muffin" in entities.alternatives[("noun", "cookie")]
    batch = generate_candidates([p, other], AugmentConfig(operators=("geca_op2",)), 1)
    swapped = [c.text for c in batch.candidates if c.provenance.parents == ("p",)]
    assert swapped and all("cookie" not in t.lower() for t in swapped)


def test_a_half_swap_is_refused_as_an_orphan():
    from dataclasses import replace
    from mwp.problem import Provenance
    p = build_problem("p", "Sam baked 12 cookies. Each cookie costs 2 dollars. How much money did Sam make?",
                      "x=12*2", 24, "toy")
    half = build_problem("h", "Sam baked 12 muffins. Each cookie costs 2 dollars. How much money did Sam make?",
                         "x=12*2", 24, "toy")
    half = replace(half, provenance=Provenance("toy", ("p",), "geca_op2", 1, "noun: cookie -> muffin"))
    (half,), _ = verify([half])
    assert consistency_reason(half, [p]) == "check_orphan_entity"


def test_dozens_and_money_verbs_are_not_read_as_plain_amounts():
    p = build_problem("p", "Sandy has 8 dozen books. Fred had spent 4 dollars. How many books does Fred have?",
                      "x=8*12", 96, "toy")
    assert quantity_entity(p, 0) == "dozen:book"  # a narrative computing books cannot stand for 8 dozen
    assert predicate(p.tokens, 6, 12, "dollar") == {"spend"}  # "had spent" is not "had" (the perfect's have is dropped)
