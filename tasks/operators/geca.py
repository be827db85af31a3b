"""Operations 1 and 2 of paper 003 as operators: seeded sampling over the hashed fragment index,
a few candidates per source problem, never a pairwise comparison of problems."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from mwp.problem import Problem
from tasks.operators.base import AugmentConfig, CandidateBatch, is_cue, rng_for
from tasks.recombine import (donor_ok, index_for, operation1, operation2, render,
                             used_quantity_in_clause)


def _question_clauses(index) -> np.ndarray:
    """(clauses,) bool: True for each problem's last clause, its question."""
    is_question = np.zeros(len(index.clause_problem), dtype=bool)
    is_question[index.clause_start[1:] - 1] = True
    return is_question


def geca_op1(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    """For each host q' (seeded order): a statement clause holding exactly one used quantity, one of
    its environments, and a donor whose question clause has that same environment."""
    batch = CandidateBatch()
    index = index_for(problems, cfg)
    rng = rng_for(seed, round_, "geca_op1")
    donors = np.array([donor_ok(p, u) for p, u in zip(problems, index.units)], dtype=bool)
    is_question = _question_clauses(index)
    donor_entries = np.flatnonzero(is_question[index.clause] & donors[index.clause_problem[index.clause]])
    donor_env = index.env[donor_entries]  # sorted, since entries are sorted by environment
    order = list(range(len(problems)))
    rng.shuffle(order)
    for p in order:
        if batch.full(cfg):
            break
        host, units = problems[p], index.units[p]
        first = int(index.clause_start[p])
        hosts = [c for c in range(len(units.spans) - 1) if used_quantity_in_clause(host, units, c) is not None]
        if not hosts:
            batch.rejected["op1_no_eligible_clause"] += 1
            continue
        entries = np.concatenate([index.entries_of_clause(first + c) for c in hosts])
        lo = np.searchsorted(donor_env, index.env[entries], side="left")
        hi = np.searchsorted(donor_env, index.env[entries], side="right")
        live = np.flatnonzero(hi > lo)
        if len(live) == 0:
            batch.rejected["op1_no_shared_environment"] += 1
            continue
        made: set[tuple[int, int]] = set()
        for _ in range(4 * cfg.per_problem_cap):
            if len(made) >= cfg.per_problem_cap:
                break
            k = live[rng.randrange(len(live))]
            d_entry = int(donor_entries[rng.randrange(int(lo[k]), int(hi[k]))])
            h_entry = int(entries[k])
            d_problem = int(index.clause_problem[index.clause[d_entry]])
            h_clause = int(index.clause[h_entry]) - first
            if d_problem == p or (h_clause, d_problem) in made:
                continue
            made.add((h_clause, d_problem))
            (f_host, env), (f_donor, env_d) = index.entry(h_entry), index.entry(d_entry)
            if env != env_d:
                batch.rejected["hash_collision"] += 1
                continue
            lang = host.language
            detail = (f"clause={h_clause} donor={problems[d_problem].id} env={render((env,), lang)!r} "
                      f"f_donor={render(f_donor, lang)!r} f_host={render(f_host, lang)!r}")
            out = operation1(host, units, h_clause, problems[d_problem], index.units[d_problem], detail, round_)
            if isinstance(out, str):
                batch.rejected[out] += 1
            else:
                batch.candidates.append(out)
    return batch


def geca_op2(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    """For each q (seeded order): a fragment f1 of a statement clause, one of f1's environments in the
    pool with another fragment f2 in it; every f1 of q becomes f2."""
    batch = CandidateBatch()
    index = index_for(problems, cfg)
    rng = rng_for(seed, round_, "geca_op2")
    limit = cfg.max_fragment_count if cfg.max_fragment_count is not None else np.iinfo(np.int64).max
    is_question = _question_clauses(index)
    # Both fragments come from statement clauses (paper 003: "not from the last sentences").
    usable = (index.frag_count <= limit) & (index.group_distinct >= 2) & ~is_question[index.clause]
    order = list(range(len(problems)))
    rng.shuffle(order)
    for p in order:
        if batch.full(cfg):
            break
        problem, units = problems[p], index.units[p]
        first = int(index.clause_start[p])
        statements = range(first, first + len(units.spans) - 1)
        entries = np.concatenate([index.entries_of_clause(c) for c in statements]) if len(statements) else np.zeros(0, np.int64)
        entries = entries[usable[entries]] if len(entries) else entries
        if len(entries) == 0:
            batch.rejected["op2_no_alternative"] += 1
            continue
        made: set[tuple] = set()
        for _ in range(4 * cfg.per_problem_cap):
            if len(made) >= cfg.per_problem_cap:
                break
            e1 = int(entries[rng.randrange(len(entries))])
            places = index.entries_of_fragment(index.frag[e1])  # f1's environments anywhere
            places = places[usable[places]]
            where = int(places[rng.randrange(len(places))])
            lo, hi = int(index.group_start[where]), int(index.group_end[where])
            e2 = rng.randrange(lo, hi)
            if index.frag[e2] == index.frag[e1] or not usable[e2]:
                continue
            (f1, _), (f1_there, env), (f2, env2) = index.entry(e1), index.entry(where), index.entry(e2)
            if f1 != f1_there or env != env2:
                batch.rejected["hash_collision"] += 1
                continue
            if (f1, f2) in made:
                continue
            made.add((f1, f2))
            lang = problem.language
            present = {tuple(problem.tokens[i:i + len(s)]) for s in f2 for i in range(len(problem.tokens))}
            if any(new != old and new in present for old, new in zip(f1, f2)):
                batch.rejected["op2_f2_already_in_problem"] += 1  # would merge two entities into one
                continue
            if cfg.protect_cue_words and any(is_cue(t, lang) for span in f1 + f2 for t in span):
                batch.rejected["op2_cue_word_fragment"] += 1
                continue
            detail = f"f1={render(f1, lang)!r} f2={render(f2, lang)!r} env={render((env,), lang)!r}"
            out = operation2(problem, units, f1, f2, detail, round_)
            if isinstance(out, str):
                batch.rejected[out] += 1
            else:
                batch.candidates.append(out)
    return batch
