"""English donors whose question shares its sentence with a condition, told as statements, for operation 1.

A third of MAWPS's problems put their last event inside the question's sentence: "George had 28 socks.
If he threw away 4 old ones and bought 36 new ones, how many socks would he have?". As a donor of
operation 1 such a problem gives nothing: its narrative ends inside the question's sentence
(``op1_donor_question_shares_its_sentence``), and the narrative without the condition would leave out
quantities its expression uses. Told as a statement, the condition is an event of the narrative like any
other ("George had 28 socks. He threw away 4 old ones and bought 36 new ones. How many socks will he
have?"): same quantities, same expression, same answer; the question's "would" becomes "will" because
the events are now told as facts. Only a leading "If ..., " directly before the question is rewritten;
anything else ("How much ... if purchased individually", "When ...") is left as it is and stays refused.
"""
from __future__ import annotations

from dataclasses import replace

from mwp.expr import Expr
from mwp.problem import Problem
from tasks.augment.base import Slot, assemble, clause_units

# Words that make the condition more than one event told as a fact: a clause inside it ("If, when he
# moved, ...", "If he sold them only when ...") or a second condition.
_NOT_A_FACT = frozenset({"if", "when", "whenever", "unless", "only", "instead"})


def declarative_donor(problem: Problem) -> Problem | None:
    """``problem`` with its "If C, how many ... would ...?" told as "C. How many ... will ...?" (same id,
    quantities, expression and answer), or None when its question does not open with such a condition."""
    if problem.language == "zh":
        return None
    units = clause_units(problem)
    if len(units.spans) < 3:
        return None
    tokens, q_start = units.tokens, units.spans[-1][0]
    if tokens[q_start - 1] != "," or tokens[q_start].lower() not in ("how", "what"):
        return None
    sentence = max([k for k, t in enumerate(tokens[:q_start]) if t in (".", "!", "?")] + [-1]) + 1
    if tokens[sentence] not in ("If", "if") or sentence + 1 >= q_start - 1:
        return None
    condition = tokens[sentence + 1:q_start - 1]
    if not condition[0][:1].isalnum() or any(t.lower() in _NOT_A_FACT for t in condition) \
            or any(t.lower() == "if" for t in tokens[q_start:]):
        return None
    told = _capital(tokens[sentence + 1])
    question = [_capital(tokens[q_start])] + ["will" if t == "would" else t for t in tokens[q_start + 1:]]
    new = tokens[:sentence] + [told] + tokens[sentence + 2:q_start - 1] + ["."] + question
    slots = [Slot(pos - (pos > sentence), j, q.value, q.surface)
             for j, (pos, q) in enumerate(zip(units.qty_pos, problem.quantities))]
    draft: Expr = problem.expression
    made = assemble(new, slots, draft, problem.language, (), "", "", 0, problem.provenance.source)
    return replace(made, id=problem.id, answer=problem.answer, provenance=problem.provenance)


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]
