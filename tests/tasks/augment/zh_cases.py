"""Helpers of the Chinese operator tests: a hand-made problem, and the refusal of one host statement for
one donor as operation 1 computes it."""
from mwp.problem import build_problem
from tasks.augment.base import clause_units
from tasks.augment.entities import predicate, read
from tasks.augment.zh_refusal import zh_refusal


def zh(pid, text, equation, answer):
    return build_problem(pid, text, equation, answer, "toy", "zh")


def refusal(host, donor, clause=0):
    """Why statement ``clause`` of ``host`` may not be replaced by ``donor``'s narrative (None: it may)."""
    u, r = clause_units(host), read(host)
    slot = next(j for j, c in enumerate(r.clause_of_slot) if c == clause)
    entity = r.quantity_entities[slot]
    states = predicate(host.tokens, *u.spans[clause], entity, "zh")
    narrative = donor.tokens[:clause_units(donor).spans[-1][0]]
    return zh_refusal(host, u, clause, entity, states, donor, narrative, r.clause_holders[clause],
                      read(donor).question_holder)
