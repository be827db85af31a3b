"""SD: one test per rule of paper Table 2 on hand-built problems, plus similarity and abandonment."""
from fractions import Fraction

import pytest

from mwp.problem import build_problem
from tasks.dbca.synthetic import LEXICAL, RULES, STRUCTURAL, build_sd, clauses, content_words, rule_for, similarity

S1, S2, S3 = "Tom picks {} apples.", "Ann picks {} apples.", "Bob picks {} apples."
SEED_Q, DONOR_Q = "How many apples are there?", "What is the apple total?"


def _problem(pid, sentences, equation, answer):
    """``answer`` None: a donor, whose answer SD never reads (not checked)."""
    return build_problem(pid, " ".join(sentences), equation, 0 if answer is None else answer, source="test",
                         language="en", check_answer=answer is not None)


def _donor(pid, equation, *values):
    """Donor of a template: 'Sam picks x apples. [Kim picks y apples.] What is the apple total?'"""
    names = ["Sam picks {} apples.", "Kim picks {} apples."]
    return _problem(pid, [names[i].format(v) for i, v in enumerate(values)] + [DONOR_Q], equation, None)


def _build(seed, donors):
    return build_sd([seed], corpus=[seed] + donors)


def _check(result, expected_train, expected_answers, label):
    assert [p.text for p in result.train] == expected_train
    assert [p.answer for p in result.train] == [Fraction(a) for a in expected_answers]
    assert list(result.labels.values()) == [label]


# rule, seed equation over 12, 4, 2, seed answer, inner template donor, outer template donor, inner value, answer
DECOMPOSITIONS = [
    (2, "x=12*4/2", 24, "x=12*4", "x=12/4", 48, 24),
    (3, "x=12*4+2", 50, "x=12*4", "x=12+4", 48, 50),
    (4, "x=12*4*2", 96, "x=12*4", "x=12*4", 48, 96),
    (6, "x=(12-4)/2", 4, "x=12-4", "x=12/4", 8, 4),
    (7, "x=(12+4)*2", 32, "x=12+4", "x=12*4", 16, 32),
    (8, "x=12/4*2", 6, "x=12/4", "x=12*4", 3, 6),
    (9, "x=12*4-2", 46, "x=12*4", "x=12-4", 48, 46),
]


@pytest.mark.parametrize("rule_id,equation,answer,inner_eq,outer_eq,inner,final", DECOMPOSITIONS)
def test_decomposition_rules_with_two_operations(rule_id, equation, answer, inner_eq, outer_eq, inner, final):
    seed = _problem("seed", [S1.format(12), S2.format(4), S3.format(2), SEED_Q], equation, answer)
    assert rule_for(seed).id == rule_id
    donors = [_donor("inner", inner_eq, 12, 4)]
    if outer_eq != inner_eq:
        donors.append(_donor("outer", outer_eq, 12, 4))
    result = _build(seed, donors)
    _check(result,
           [f"Tom picks 12 apples. Ann picks 4 apples. {DONOR_Q}",  # {s1, s2, Delta}: the inner step
            f"Sam picks {inner} apples. Bob picks 2 apples. {SEED_Q}"],  # {Delta, s3, s4}: Delta holds it
           [inner, final], STRUCTURAL)
    assert result.test == [seed] and result.rules[rule_id] == 1
    assert [p.provenance.detail for p in result.train] == [f"rule {rule_id}"] * 2


@pytest.mark.parametrize("rule_id,equation,answer,first_eq,first_answer", [
    (1, "x=12*(1-0.25)", 9, "x=12*0.5", 9),
    (5, "x=12/(1-0.25)", 16, "x=12/0.5", 16),
])
def test_decomposition_rules_with_one_minus(rule_id, equation, answer, first_eq, first_answer):
    seed = _problem("seed", [S1.format(12), "Ann eats 0.25 of the apples.", SEED_Q], equation, answer)
    assert rule_for(seed).id == rule_id
    two = _problem("two", ["Sam picks 12 apples.", "Kim picks 0.5 apples.", DONOR_Q], first_eq, None)
    one = _problem("one", ["Sam picks 0.5 apples.", DONOR_Q], "x=1-0.5", None)
    result = _build(seed, [two, one])
    _check(result,
           [f"Tom picks 12 apples. Kim picks 0.75 apples. {SEED_Q}",  # {s1, Delta, s3}: Delta holds 1 - 0.25
            f"Ann eats 0.25 of the apples. {DONOR_Q}"],  # {s2, Delta}: 1 - n1
           [first_answer, "0.75"], STRUCTURAL)


@pytest.mark.parametrize("rule_id,equation,answer,new_eq,new_answer", [
    (10, "x=12+4", 16, "x=12-4", 8),
    (11, "x=12-4", 8, "x=12+4", 16),
    (12, "x=12*4", 48, "x=12/4", 3),
    (13, "x=12/4", 3, "x=12*4", 48),
])
def test_reformulation_rules(rule_id, equation, answer, new_eq, new_answer):
    seed = _problem("seed", [S1.format(12), S2.format(4), SEED_Q], equation, answer)
    assert rule_for(seed).id == rule_id
    result = _build(seed, [_donor("donor", new_eq, 12, 4)])
    assert result.train == [seed]  # the seed (known template) trains; q' (new pairing) tests
    assert [p.text for p in result.test] == [f"Tom picks 12 apples. Ann picks 4 apples. {DONOR_Q}"]
    assert [p.answer for p in result.test] == [new_answer]
    assert result.labels == {f"seed/sd{rule_id}": LEXICAL}


def test_the_rule_table_has_nine_decompositions_and_four_reformulations():
    assert [r.id for r in RULES] == list(range(1, 14))
    assert [r.kind for r in RULES] == ["decomposition"] * 9 + ["reformulation"] * 4


def test_similarity_is_the_jaccard_overlap_of_content_words():
    a = _problem("a", ["Tom picks 3 apples.", "How many apples?"], "x=3", 3)
    b = _problem("b", ["Ann picks 3 pears.", "How many pears?"], "x=3", 3)
    assert content_words(a) == {"tom", "picks", "apples"}  # "how", "many" are stop words
    assert similarity(content_words(a), content_words(b)) == pytest.approx(1 / 5)  # {picks} / 5 words


def test_a_seed_whose_best_donor_shares_no_content_word_is_abandoned():
    seed = _problem("seed", [S1.format(12), S2.format(4), SEED_Q], "x=12+4", 16)
    stranger = _problem("donor", ["Liz owns 12 cars.", "Max owns 4 cars.", "Tell me now?"], "x=12-4", 8)
    result = _build(seed, [stranger])
    assert result.train == [] and result.test == [] and result.abandoned["no_similar_donor"] == 1


def test_a_reformulation_whose_constituents_were_trained_with_the_new_template_is_abandoned():
    decomposable = _problem("dec", [S1.format(12), S2.format(4), S3.format(2), SEED_Q], "x=12*4-2", 46)
    reform = _problem("ref", [S1.format(9), S2.format(3), SEED_Q], "x=9+3", 12)
    donors = [_donor("mul", "x=12*4", 12, 4), _donor("sub", "x=12-4", 12, 4)]
    result = build_sd([decomposable, reform], corpus=[decomposable, reform] + donors)
    # the decomposition trains "... Bob picks 2 apples ..." with n1 - n2, which shares words with q'
    assert list(result.labels.values()) == [STRUCTURAL]
    assert result.abandoned["constituents_seen_with_template"] == 1


def test_clauses_are_cut_per_sentence_by_the_shared_cutter():
    p = _problem("p", ["Tom picks 3 apples, , and Ann picks 4 apples; Bob sleeps.", "How many apples?"], "x=3+4", 7)
    # the lone comma joins the clause before it (SD's own cutter made it a clause of its own)
    assert clauses(p) == [("Tom", "picks", "3", "apples", ",", ","), ("and", "Ann", "picks", "4", "apples", ";"),
                          ("Bob", "sleeps", "."), ("How", "many", "apples", "?")]
