"""Operation 1 as paper 003 describes it, matched on the counted entity alone (``geca_op1_literal``).

Paper 003 (Figure 3a) pairs a statement s'_i of q' with a problem q whose question shares s'_i's
environment once the quantity and the interrogative are left out ("How many peaches?" with "There are 36
peaches,"): the same counted entity. ``geca_op1`` (geca.py) adds what keeps a composition coherent: the
same holder and predicate, a donor whose question is about its own narrative, no near duplicate, no
conflicting rate, a protagonist renamed only where genders and names allow. This operator leaves all of
those out, so that a study can measure what they cost. It exists for one question: SD training parts are
filled with the sentences of the most similar problem, so their questions often ask about a person or a
thing their narratives never name (docs/studies/sd-audit.md), and ``geca_op1`` refuses exactly those
parts (bench/sd_op1_reach.py). Composing them anyway is the paper's operator taken literally; what it
keeps is less coherent by construction, and a report that uses it must read its kept problems.

What it still requires (each a counted refusal): a statement clause with exactly one used quantity of
a known entity that is not a rate, a donor with a narrative and no used quantity in its question
(``op1_literal_no_donor``), and the mechanics of operation 1 itself (``op1_value_twice_in_text``, ...).
Every candidate is verified and checked as any other (tasks/augment/generate.py), held-out matches
included.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, clause_units, rng_for
from tasks.augment.entities import read
from tasks.augment.compose import donor_ok, is_rate, operation1, used_quantity_in_clause


def geca_op1_literal(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    """For each host (seeded order), up to ``cfg.per_problem_cap`` compositions: a statement clause whose one
    used quantity counts entity E, and any other problem whose question asks for E."""
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "geca_op1_literal")
    units = [clause_units(p) for p in problems]
    readings = [read(p) for p in problems]
    donors: dict[str, list[int]] = defaultdict(list)
    for d, (problem, u, reading) in enumerate(zip(problems, units, readings)):
        if reading.question_entity is not None and donor_ok(problem, u) \
                and not is_rate(problem, *u.spans[-1]):
            donors[reading.question_entity].append(d)
    order = list(range(len(problems)))
    rng.shuffle(order)
    for p in order:
        if batch.full(cfg):
            break
        host, u, reading = problems[p], units[p], readings[p]
        clauses = []
        for c in range(len(u.spans) - 1):
            slot = used_quantity_in_clause(host, u, c)
            if slot is None or is_rate(host, *u.spans[c]):
                continue
            pool = [d for d in donors.get(reading.quantity_entities[slot], ()) if d != p]
            if pool:
                clauses.append((c, reading.quantity_entities[slot], pool))
        if not clauses:
            batch.rejected["op1_literal_no_donor"] += 1
            continue
        made: set[tuple[int, int]] = set()
        for _ in range(4 * cfg.per_problem_cap):
            if len(made) >= cfg.per_problem_cap:
                break
            c, entity, pool = clauses[rng.randrange(len(clauses))]
            d = pool[rng.randrange(len(pool))]
            if (c, d) in made:
                continue
            made.add((c, d))
            out = operation1(host, u, c, problems[d], units[d], f"clause={c} donor={problems[d].id} "
                             f"entity={entity!r} literal", round_)
            if isinstance(out, str):
                batch.rejected[out] += 1
            else:
                batch.candidates.append(replace(out, provenance=replace(out.provenance, operator="geca_op1_literal")))
    return batch
