"""One round of candidate generation: run the configured operators, verify labels, deduplicate
against the pool and within the round, cap, and stamp provenance. Pure: the loop's Prefect task
(tasks/loop/steps.py) wraps it."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, rng_for
from tasks.augment.registry import get_operator
from tasks.augment.verify import dedupe, verify


def generate_candidates(pool: Sequence[Problem], config: AugmentConfig = AugmentConfig(),
                        round_: int = 1) -> CandidateBatch:
    """Candidates of round ``round_``, verified, unique and capped; ``rejected`` counts every drop by
    reason (operator reasons, verification reasons, ``duplicate``, ``round_cap``). Each operator of
    ``config.operators`` gets an equal share of ``per_round_cap``."""
    seed = config.round_seed(round_)
    names = list(dict.fromkeys(config.operators))
    share = None if config.per_round_cap is None else -(-config.per_round_cap // max(len(names), 1))
    out = CandidateBatch()
    for name in names:
        operator = get_operator(name)
        batch = operator(pool, replace(config, per_round_cap=share), seed, round_)
        out.rejected.update(batch.rejected)
        kept, rejected = verify(batch.candidates, config.allow_unused_quantities, config.reject_negative_answers)
        out.rejected.update(rejected)
        out.candidates.extend(replace(p, provenance=replace(p.provenance, round=round_, operator=name)) for p in kept)
    unique, rejected = dedupe(out.candidates, pool)
    out.rejected.update(rejected)
    if config.per_round_cap is not None and len(unique) > config.per_round_cap:
        rng = rng_for(seed, round_, "round_cap")
        chosen = sorted(rng.sample(range(len(unique)), config.per_round_cap))
        out.rejected["round_cap"] += len(unique) - len(chosen)
        unique = [unique[i] for i in chosen]
    out.candidates = unique
    return out
