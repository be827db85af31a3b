"""Operation 1 (English) with a donor whose question asks the same of another noun: the donor is told of the
host's noun by operation 2's swap (every mention, the verb licence, no merge) when the pool shows the two
nouns as alternatives, and composes as an exact donor would; a swap the licence or the donor's own text
refuses is a counted rejection."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import consistency_reason
from tasks.augment.geca import geca_op1
from tasks.augment.licence import attested, verb_refusal
from tasks.augment.verify import verify

HOST = build_problem("h", "Willy has 1400 crayons. Lucy has 290 crayons. How many more crayons does Willy have than "
                     "Lucy?", "x=1400-290", 1110, "toy")
DONOR = build_problem("d", "Wanda has 4 blocks. Theresa gives Wanda 79 more. How many blocks does Wanda have in all?",
                      "x=4+79", 83, "toy")
# Two problems that fill one environment with crayons and blocks: the pool's licence for block ~ crayon.
CRAYONS = build_problem("o1", "Sam found 5 crayons in the park. He lost 2. How many crayons does Sam have?", "x=5-2",
                        3, "toy")
BLOCKS = build_problem("o2", "Sam found 6 blocks in the park. He lost 2. How many blocks does Sam have?", "x=6-2", 4,
                       "toy")


def _made(pool, parents=("h", "d")):
    batch = geca_op1(pool, AugmentConfig(), seed=0, round_=1)
    return batch, [c for c in batch.candidates if c.provenance.parents == parents]


def _refused(pool, reason):
    """Nothing composed of host h and donor d, and ``reason`` counted."""
    batch, made = _made(pool)
    assert made == [] and batch.rejected[reason] >= 1


def test_a_donor_asking_for_an_alternative_noun_is_told_of_the_hosts_and_composes():
    batch, made = _made([HOST, DONOR, CRAYONS, BLOCKS])
    kept, _ = verify(made)
    (new,) = kept
    assert new.text == ("Willy has 1400 crayons. Lucy has 4 crayons. Theresa gives Lucy 79 more. How many more "
                        "crayons does Willy have than Lucy?")
    assert " ".join(to_prefix(new.expression)) == "- N0 + N1 N2" and new.answer == Fraction(1317)
    assert "donor-swapped=block->crayon" in new.provenance.detail and "renamed=Wanda->Lucy" in new.provenance.detail
    assert "block" not in new.text  # no trace of the donor's noun
    assert consistency_reason(new, [HOST, DONOR, CRAYONS, BLOCKS]) is None


def test_without_the_pools_licence_the_donor_of_another_noun_is_never_drawn():
    batch, made = _made([HOST, DONOR])
    assert made == [] and batch.rejected["op1_no_statement_with_a_donor"] >= 1
    assert not any(k.startswith("op1_donor_swap_") for k in batch.rejected)


def test_a_donor_that_already_counts_the_hosts_noun_is_refused_not_merged():
    # Told of crayons, "gives Wanda 79 crayons" and the blocks would become one entity.
    donor = build_problem("d", "Wanda has 4 blocks. Theresa gives Wanda 79 blocks and 3 crayons. How many blocks does "
                          "Wanda have in all?", "x=4+79", 83, "toy")
    _refused([HOST, donor, CRAYONS, BLOCKS], "op1_donor_swap_target_already_in_problem")


def test_a_swap_the_verb_licence_refuses_is_a_counted_rejection():
    # pumpkin ~ pencil share "found ... in the park"; nothing in the pool grows pencils.
    host = build_problem("h", "Tom has 300 pencils. Ann has 29 pencils. How many more pencils does Tom have than Ann?",
                         "x=300-29", 271, "toy")
    donor = build_problem("d", "Rosa grew 43 pumpkins. She sold 3. How many pumpkins does Rosa have?", "x=43-3", 40,
                          "toy")
    env = [build_problem(f"o{i}", f"Sam found 5 {noun} in the park. He lost 2. How many {noun} does Sam have?",
                         "x=5-2", 3, "toy") for i, noun in enumerate(("pencils", "pumpkins"))]
    _refused([host, donor, *env], "op1_donor_swap_verb_does_not_take_noun")


def test_what_is_spent_must_be_something_the_pool_spends():
    arcade = build_problem("a", "At the arcade Martha won 29 tickets. She spent 12 of her tickets on a hat. How many "
                           "tickets does she have left?", "x=29-12", 17, "toy")
    shop = build_problem("s", "Ann had 20 dollars. She spent 6 dollars on a hat. How many dollars does she have left?",
                         "x=20-6", 14, "toy")
    takes = attested([arcade, shop])
    assert takes["spend"] >= {"ticket"}
    assert verb_refusal(arcade, "ticket", "peanut", takes) == "verb_does_not_take_noun"
    assert verb_refusal(arcade, "ticket", "token", {**takes, "spend": takes["spend"] | {"token"}}) is None


def test_a_statement_comparing_with_someone_told_elsewhere_is_refused():
    # "Juan has 175 more marbles than Connie" told as "Juan has 639. Cindy has 504." would read Juan's 639 as asked.
    host = build_problem("h", "Connie has 39 marbles. Juan has 175 more marbles than Connie. How many marbles does "
                         "Juan have?", "x=39+175", 214, "toy")
    donor = build_problem("d", "Karen has 639 marbles. Cindy has 504 marbles. How many more marbles does Karen have "
                          "than Cindy?", "x=639-504", 135, "toy")
    _refused([host, donor], "op1_statement_compares_with_another")


def test_a_statement_after_the_event_the_question_asks_about_is_refused():
    # The donor's events would come after the gift: 72 - (53 + 16) is not what she gave.
    host = build_problem("h", "Joan found 72 seashells on the beach. She gave Alyssa some of her seashells. She has 69 "
                         "seashells. How many seashells did she give to Alyssa?", "x=72-69", 3, "toy")
    donor = build_problem("d", "Mary has 53 seashells. She gets 16 more from Steve. How many seashells does Mary have "
                          "in all?", "x=53+16", 69, "toy")
    _refused([host, donor], "op1_statement_is_what_is_left")
    # The same donor for the statement before the gift composes.
    first = build_problem("h", "Joan has 72 seashells. She gave Alyssa 3 of her seashells. How many seashells does "
                          "Joan have?", "x=72-3", 69, "toy")
    _, made = _made([first, donor])
    kept, _ = verify(made)
    assert [c.text for c in kept] == ["Joan has 53 seashells. She gets 16 more from Steve. She gave Alyssa 3 of her "
                                      "seashells. How many seashells does Joan have?"]
