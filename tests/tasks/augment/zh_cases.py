"""Helpers of the Chinese operator tests: a hand-made problem, the refusal of one host statement for
one donor as operation 1 computes it, and one operation-1 pass with what it made of a host and a donor."""
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.geca import geca_op1
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


def op1_pass(pool, parents=("h", "d")):
    """One operation-1 pass over ``pool`` (seed 0, round 1): its batch, and the candidates made of ``parents``."""
    batch = geca_op1(pool, AugmentConfig(), seed=0, round_=1)
    return batch, [c for c in batch.candidates if c.provenance.parents == parents]


def op1_refused(pool, reason):
    """Nothing is made of h and d, and ``reason`` was counted."""
    batch, made = op1_pass(pool)
    assert made == [] and batch.rejected[reason] >= 1, dict(batch.rejected)
