"""Label verification and deduplication of augmented problems (pure functions).

A candidate is kept only when its label is right by construction *and* by checking:
- its quantities are exactly the numbers the text holds (re-detected from the tokens, same values,
  same positions), so every slot of the expression points at a number a reader can see;
- the expression holds no unknown ``x`` and every slot ``N{i}`` names an existing quantity;
- it evaluates exactly (no division by zero) and the answer is recomputed from it;
- with ``reject_negative_answers``, neither its answer nor any step on the way is negative: a composition
  that puts a smaller amount where the host's next step takes more away ("Billy starts with 17 crayons.
  Jennifer takes 6 away. 52 are eaten by a hippopotamus.") evaluates to a right answer of a wrong story;
- no sentence that holds a quantity is told twice word for word: a composition whose donor tells an event
  its host tells again ("He finds another 47. He finds another 47.") sums the same event twice.
Text quantities the expression does not use are allowed by default: the original data has them
(Math23K "每隔2米 ... 11棵" problems keep distractors), see ``allow_unused_quantities``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Iterable, Sequence

from mwp.expr import DivisionByZeroError, EvaluationError, Var, evaluate, iter_nodes, quantity_slots, step_values
from mwp.problem import Problem, find_quantities
from mwp.text import conditional_number_word


def rejection_reason(problem: Problem, allow_unused_quantities: bool = True,
                     reject_negative_answers: bool = True) -> str | None:
    """None when the problem's label checks out, else a short reason."""
    found = find_quantities(problem.sentences, problem.language)
    # number words that are quantities only where the equation uses them ("twice") stay quantities
    # when they still read as that number at their place
    found += [q for q in problem.quantities if problem.language == "en" and 0 <= q.sentence < len(problem.sentences)
              and 0 <= q.token < len(problem.sentences[q.sentence])
              and conditional_number_word(problem.sentences[q.sentence], q.token) == q.value]
    if sorted((q.sentence, q.token, q.value) for q in found) != [
            (q.sentence, q.token, q.value) for q in problem.quantities]:
        return "quantity_mismatch"
    if _repeats_a_sentence(problem):
        return "repeated_sentence"
    if any(isinstance(node, Var) for node in iter_nodes(problem.expression)):
        return "unknown_in_expression"
    slots = quantity_slots(problem.expression)
    if any(i < 0 or i >= len(problem.quantities) for i in slots):
        return "missing_quantity"
    if not allow_unused_quantities and set(slots) != set(range(len(problem.quantities))):
        return "unused_quantity"
    try:
        value = evaluate(problem.expression, problem.values)
    except DivisionByZeroError:
        return "division_by_zero"
    except EvaluationError:
        return "evaluation_error"
    if reject_negative_answers and value < 0:
        return "negative_answer"
    if reject_negative_answers and any(v < 0 for v in step_values(problem.expression, problem.values)):
        return "negative_step"
    return None


def _repeats_a_sentence(problem: Problem) -> bool:
    """True when two sentences holding a quantity have the same words (case and numbers as written)."""
    told = [tuple(t.lower() for t in problem.sentences[i]) for i in sorted({q.sentence for q in problem.quantities})]
    return len(set(told)) < len(told)


def verify(problems: Iterable[Problem], allow_unused_quantities: bool = True,
           reject_negative_answers: bool = True) -> tuple[list[Problem], Counter]:
    """Problems whose labels check out, each with its answer recomputed; rejections by reason."""
    kept: list[Problem] = []
    rejected: Counter = Counter()
    for problem in problems:
        reason = rejection_reason(problem, allow_unused_quantities, reject_negative_answers)
        if reason is not None:
            rejected[reason] += 1
            continue
        kept.append(replace(problem, answer=evaluate(problem.expression, problem.values)))
    return kept, rejected


def dedupe(candidates: Sequence[Problem], existing: Iterable[Problem] = ()) -> tuple[list[Problem], Counter]:
    """Drop candidates whose normalized text + expression (``Problem.key``) is in ``existing`` or
    came earlier in ``candidates``; also drop a repeated id (same parents, operator and detail)."""
    seen_keys = {p.key() for p in existing}
    seen_ids: set[str] = set()
    kept: list[Problem] = []
    rejected: Counter = Counter()
    for problem in candidates:
        key = problem.key()
        if key in seen_keys:
            rejected["duplicate"] += 1
            continue
        if problem.id in seen_ids:
            rejected["duplicate_id"] += 1
            continue
        seen_keys.add(key)
        seen_ids.add(problem.id)
        kept.append(problem)
    return kept, rejected
