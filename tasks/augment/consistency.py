"""Consistency checks every candidate passes before it is scored: a label that evaluates can still sit on
text that says something else. Each refusal is a counted reason (``check_*``) in the round record.

- ``check_question_unreadable``: the question's entity cannot be read (no "how many X", no unit), so
  nothing below can be checked; the candidate is not kept on trust.
- ``check_question_entity_not_stated``: no quantity the expression uses counts what the question asks.
- ``check_count_not_whole``: the question counts things (not a unit, money or percent) and the answer is
  not a whole number; ``check_zero_answer``: the answer is 0.
- ``check_orphan_entity``: a swap left a mention of the replaced entity behind.
- Chinese compositions of named numbers (``zh_numbers.py``: "甲数的(5/8)是25，乙数比甲数的3倍还多25，乙数=？") ask the
  host's question of numbers, which names no entity: they get the checks that read none (zero answer, unused
  quantity); the route's own reading of the host statement and the donor question stands for the others.
- ``check_unused_quantity``: the text holds a quantity the expression ignores that its parents did not
  (original data may mention numbers it does not use; an operator may not add such numbers).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

from mwp.expr import quantity_slots
from mwp.problem import Problem
from tasks.augment import zh, zh_numbers
from tasks.augment.base import UNIT_WORDS
from tasks.augment.entities import asks_about_used_entity, entity_key, heads, read

SWAP_OPERATORS = frozenset({"geca_op2", "entity_substitution"})
# Measures may be fractional; counts (and ages: "how old" is asked in whole years) may not.
_MEASURES = frozenset({"dollar", "cent", "percent", "dozen"} | {entity_key(u) for u in UNIT_WORDS}) - {"year"}


def _unused_values(problem: Problem) -> Counter:
    used = set(quantity_slots(problem.expression))
    return Counter(q.value for j, q in enumerate(problem.quantities) if j not in used)


def _mentions(problem: Problem, word: str) -> int:
    """Mentions of a name, or of a noun in any number (Chinese: occurrences of its characters)."""
    if problem.language == "zh":
        return "".join(problem.tokens).count(word)
    if word[:1].isupper():
        return sum(t.removesuffix("'s") == word for t in problem.tokens)
    return sum(t.isalpha() and entity_key(t) == word for t in problem.tokens)


def _counts_things(asked: str, language: str) -> bool:
    """The question counts things: English, any entity but a measure; Chinese, a count classifier (个, 本)
    ("乙数是多少" may well be a fraction)."""
    if language == "zh":
        return bool(heads(asked) & zh.COUNT_CLASSIFIERS) and not heads(asked) & zh.MEASURE_UNITS
    return not heads(asked) & _MEASURES


def _swapped(detail: str) -> tuple[str, str] | None:
    """(old, new) from a swap's provenance detail "kind: old -> new"."""
    _, _, pair = detail.partition(": ")
    old, arrow, new = pair.partition(" -> ")
    return (old.strip(), new.strip()) if arrow else None


def consistency_reason(candidate: Problem, parents: Sequence[Problem]) -> str | None:
    """Why ``candidate`` (answer already verified) is refused, or None when it passes every check."""
    # Operation 1 reads "How many are left?" as the one entity its text counts (entities.question_entity), so a
    # composition whose narrative brings in another entity, or a product, is unreadable here; swaps never do.
    elided = candidate.provenance.operator == "geca_op1"
    if elided and zh_numbers.composed_by_number(candidate.provenance.detail):
        # A named number's composition (zh_numbers.py) asks the host's own question of numbers, which counts
        # nothing ("乙数=？" may well be a fraction): the route's reading stands for the entity checks.
        return _number_reason(candidate, parents)
    asked = read(candidate, elided).question_entity
    if asked is None:
        return "check_question_unreadable"
    if not asks_about_used_entity(candidate, elided):
        return "check_question_entity_not_stated"
    if candidate.answer == 0:
        return "check_zero_answer"
    if candidate.answer.denominator != 1 and _counts_things(asked, candidate.language):
        return "check_count_not_whole"
    if candidate.language == "zh" and candidate.provenance.operator == "geca_op1" and parents \
            and parents[0].answer.denominator == 1 != candidate.answer.denominator and not heads(asked) & zh.MEASURE_UNITS:
        return "check_count_not_whole"  # "截成(1/4)米长的小段，可以截成多少": the host's whole count, now 40/3
    if candidate.provenance.operator in SWAP_OPERATORS:
        swapped = _swapped(candidate.provenance.detail)
        if swapped is None or _mentions(candidate, swapped[0]) > 0:
            return "check_orphan_entity"
    return _unused_reason(candidate, parents)


def _unused_reason(candidate: Problem, parents: Sequence[Problem]) -> str | None:
    allowed = Counter()
    for parent in parents:
        allowed += _unused_values(parent)
    if _unused_values(candidate) - allowed:
        return "check_unused_quantity"
    return None


def _number_reason(candidate: Problem, parents: Sequence[Problem]) -> str | None:
    """The checks that read no entity, for a composition of named numbers."""
    if candidate.answer == 0:
        return "check_zero_answer"
    return _unused_reason(candidate, parents)


def check_candidates(candidates: Iterable[Problem], pool: Mapping[str, Problem]) -> tuple[list[Problem], Counter]:
    """The candidates that pass, and the refusals counted by reason (``check_parent_missing`` when a
    parent is not in the pool, so nothing is checked against an unknown source)."""
    kept, rejected = [], Counter()
    for candidate in candidates:
        parents = [pool.get(pid) for pid in candidate.provenance.parents]
        reason = "check_parent_missing" if None in parents else consistency_reason(candidate, parents)
        if reason is None:
            kept.append(candidate)
        else:
            rejected[reason] += 1
    return kept, rejected
