"""One round of candidate generation: run the configured operators, verify labels, deduplicate
against the pool and within the round, cap, and stamp provenance. Pure: the loop's Prefect task
(tasks/loop/steps.py) wraps it."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, rng_for
from tasks.augment.registry import check_operators, get_operator
from tasks.augment.consistency import check_candidates
from tasks.augment.leakage import HeldOut
from tasks.augment.verify import dedupe, verify


def generate_candidates(pool: Sequence[Problem], config: AugmentConfig = AugmentConfig(), round_: int = 1,
                        held_out: HeldOut | None = None) -> CandidateBatch:
    """Candidates of round ``round_``: verified, passing the consistency checks, unique, matching no
    held-out problem, capped; ``rejected`` counts every drop by reason (operator reasons, verification
    reasons, ``check_*``, ``duplicate``, ``matches_<set>``, ``round_cap``). Each operator of
    ``config.operators`` gets an equal share of ``per_round_cap``."""
    check_operators(config.operators)
    seed = config.round_seed(round_)
    names = list(dict.fromkeys(config.operators))
    share = None if config.per_round_cap is None else -(-config.per_round_cap // max(len(names), 1))
    out = CandidateBatch()
    by_id = {p.id: p for p in pool}
    for name in names:
        operator = get_operator(name)
        batch = operator(pool, replace(config, per_round_cap=share), seed, round_)
        out.rejected.update(batch.rejected)
        kept, rejected = verify(batch.candidates, config.allow_unused_quantities, config.reject_negative_answers)
        out.rejected.update(rejected)
        kept, rejected = check_candidates(kept, by_id)
        out.rejected.update(rejected)
        out.candidates.extend(replace(p, provenance=replace(p.provenance, round=round_, operator=name)) for p in kept)
    unique, rejected = dedupe(out.candidates, pool)
    out.rejected.update(rejected)
    if held_out is not None:
        unique, rejected = held_out.drop_matches(unique)
        out.rejected.update(rejected)
    if config.per_round_cap is not None and len(unique) > config.per_round_cap:
        rng = rng_for(seed, round_, "round_cap")
        chosen = sorted(rng.sample(range(len(unique)), config.per_round_cap))
        out.rejected["round_cap"] += len(unique) - len(chosen)
        unique = [unique[i] for i in chosen]
    out.candidates = unique
    return out
