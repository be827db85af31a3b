"""The built-in corpus: determinism, exact valid answers, one quantity a sentence, compositionality."""
import random
from collections import defaultdict
from fractions import Fraction

import pytest

from mwp.builtin import check_scenarios, generate_corpus, generate_problem
from mwp.scenarios import SCENARIOS, Kind, Rule, Scenario
from mwp.expr import BinOp, evaluate, operator_count, template


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(n=1200, seed=7)


def test_grammars_are_consistent():
    assert check_scenarios() == []
    assert len(SCENARIOS) >= 8


def test_same_seed_same_corpus_other_seed_other_corpus():
    first = [p.to_dict() for p in generate_corpus(n=150, seed=5)]
    assert first == [p.to_dict() for p in generate_corpus(n=150, seed=5)]
    other = [p.to_dict() for p in generate_corpus(n=150, seed=6)]
    assert [p["sentences"] for p in other] != [p["sentences"] for p in first]
    assert len(first) == 150 and len({p["id"] for p in first}) == 150


def test_answers_are_exact_positive_integers_and_quantities_distinct(corpus):
    for p in corpus:
        assert p.answer == evaluate(p.expression, p.values)
        assert p.answer.denominator == 1 and p.answer >= 1, p.text
        assert len(set(p.values)) == len(p.values), p.text
        assert sorted(set(i for i in _slots(p.expression))) == list(range(len(p.values)))  # every quantity used


def _slots(expr):
    from mwp.expr import quantity_slots
    return quantity_slots(expr)


def test_question_last_and_one_quantity_per_sentence(corpus):
    for p in corpus:
        assert p.question[-1] == "?" and all(s[-1] == "." for s in p.sentences[:-1]), p.text
        per_sentence = [q.sentence for q in p.quantities]
        assert len(per_sentence) == len(set(per_sentence)), p.text
        assert len(p.sentences) - 1 not in per_sentence  # the question states no quantity
        assert p.provenance.source == "builtin" and p.provenance.detail.startswith("scenario=")


def test_operator_counts_and_scenarios_are_mixed(corpus):
    counts = {k: sum(operator_count(p.expression) == k for p in corpus) for k in (1, 2, 3)}
    assert all(c > 150 for c in counts.values()), counts
    assert {p.provenance.detail for p in corpus} == {f"scenario={s.name}" for s in SCENARIOS}


def test_each_one_operator_template_occurs_in_many_scenarios():
    problems = generate_corpus(n=900, seed=0, operator_weights={1: 1.0})
    scenarios = defaultdict(set)
    for p in problems:
        scenarios[template(p.expression)].add(p.provenance.detail)
    # Counted by hand from the grammars: + in 8 scenarios, - * / in all 9.
    assert {t: len(s) for t, s in scenarios.items()} == {"+ n0 n1": 8, "- n0 n1": 9, "* n0 n1": 9, "/ n0 n1": 9}


def test_deeper_problems_are_compositions_of_shallower_ones(corpus):
    templates = {template(p.expression) for p in corpus}
    deep = [p for p in corpus if operator_count(p.expression) >= 2]
    for p in deep:
        for operand in (p.expression.left, p.expression.right):
            if isinstance(operand, BinOp):
                assert template(operand) in templates, (p.text, template(operand))


def test_a_composed_problem_by_hand():
    # Fixed values (lo == hi) make the draw deterministic: with 2 operators the only derivation is
    # money - cost with cost = count * price (cost may be stated once, so money - cost - cost is refused).
    toy = Scenario("toy", {
        "money": Kind(("{name} has {n} dollars.",), (Rule("-", "money", "cost", "How many dollars does {name} have left?"),), 50, 50),
        "cost": Kind(("{name} spends {n} dollars.",), (Rule("*", "count", "price", "How much does {name} spend?"),), 9, 9),
        "count": Kind(("{name} buys {n} {items}.",), (), 3, 3),
        "price": Kind(("Each {item} costs {n} dollars.",), (), 4, 4),
    }, {"name": "names", "item": "goods"})
    p = generate_problem(random.Random(0), toy, 2, "toy-1")
    name = p.tokens[0]
    body, buys, each, question = [" ".join(sent) for sent in p.sentences]
    assert body == f"{name} has 50 dollars ." and buys.startswith(f"{name} buys 3 ")
    assert each.startswith("Each ") and each.endswith(" costs 4 dollars .")
    assert question == f"How many dollars does {name} have left ?"
    assert p.prefix() == ["-", "N0", "*", "N1", "N2"] and p.values == [50, 3, 4] and p.answer == 38
    shallower = generate_problem(random.Random(0), toy, 1, "toy-2")
    assert template(shallower.expression) in {"- n0 n1", "* n0 n1"}


def test_bad_arguments():
    with pytest.raises(ValueError):
        generate_corpus(n=-1)
    with pytest.raises(ValueError, match="unknown scenarios"):
        generate_corpus(n=5, scenarios=("space",))
    with pytest.raises(ValueError):
        generate_corpus(n=5, operator_weights={0: 1.0})
    only = generate_corpus(n=20, seed=1, scenarios=("ages",), operator_weights={1: 1.0})
    assert {p.provenance.detail for p in only} == {"scenario=ages"}
    assert all(p.answer == Fraction(int(p.answer)) for p in only)
