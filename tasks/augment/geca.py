"""Operations 1 and 2 of paper 003 (section 3, Figure 3) and the two operators built on them: seeded
sampling over the hashed fragment index (tasks/augment/geca_index.py), a few candidates per source
problem, never a pairwise comparison of problems.

Operation 1 pairs a question clause of q with a statement clause of q' *in the same environment*
(the Figure 3a reading: the question asks for the very quantity the statement gives) and puts q's
narrative in place of that statement; the expressions compose. Operation 2 takes a fragment f1 of a
statement clause of q, one of f1's environments anywhere in the pool and another fragment f2 of that
environment, and replaces every occurrence of f1 in q by f2; the expression is kept.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from mwp.expr import Qty, quantity_slots, substitute
from mwp.problem import Problem
from mwp.text import CLAUSE_END
from tasks.augment.base import AugmentConfig, CandidateBatch, Slot, Units, assemble, is_cue, rng_for
from tasks.augment.geca_index import Fragment, index_for, render


def used_quantity_in_clause(problem: Problem, units: Units, clause: int) -> int | None:
    """The slot of the one quantity of ``clause`` that the expression uses, else None."""
    start, end = units.spans[clause]
    used = set(quantity_slots(problem.expression))
    inside = [j for j, pos in enumerate(units.qty_pos) if start <= pos < end and j in used]
    return inside[0] if len(inside) == 1 else None


def donor_ok(problem: Problem, units: Units) -> bool:
    """A question donor needs a narrative (>= 2 clauses) and no used quantity in its question."""
    if len(units.spans) < 2:
        return False
    q_start = units.spans[-1][0]
    used = set(quantity_slots(problem.expression))
    return not any(pos >= q_start and j in used for j, pos in enumerate(units.qty_pos))


def operation1(host: Problem, host_units: Units, clause: int, donor: Problem, donor_units: Units,
               detail: str, round_: int) -> Problem | str:
    """q' = host with its statement ``clause`` replaced by the donor's narrative (all clauses but its
    question); expression = host's with the clause's quantity replaced by the donor's expression.
    Returns the new problem, or a reason string."""
    if clause >= len(host_units.spans) - 1:
        return "op1_question_clause"
    slot = used_quantity_in_clause(host, host_units, clause)
    if slot is None:
        return "op1_clause_not_one_used_quantity"
    if not donor_ok(donor, donor_units):
        return "op1_donor_question_holds_quantity"
    start, end = host_units.spans[clause]
    narrative = list(donor_units.tokens[:donor_units.spans[-1][0]])
    if narrative[-1] in CLAUSE_END and host_units.tokens[end - 1] in CLAUSE_END:
        narrative[-1] = host_units.tokens[end - 1]  # the narrative ends as the clause it replaces did
    tokens = host_units.tokens[:start] + narrative + host_units.tokens[end:]
    shift = len(narrative) - (end - start)
    offset = len(host.quantities)
    slots = [Slot(pos if pos < start else pos + shift, j, q.value, q.surface)
             for j, (pos, q) in enumerate(zip(host_units.qty_pos, host.quantities)) if not start <= pos < end]
    slots += [Slot(start + pos, offset + j, q.value, q.surface)
              for j, (pos, q) in enumerate(zip(donor_units.qty_pos, donor.quantities)) if pos < len(narrative)]
    shifted = substitute(donor.expression, {j: Qty(offset + j) for j in set(quantity_slots(donor.expression))})
    draft = substitute(host.expression, {slot: shifted})
    return assemble(tokens, slots, draft, host.language, (host.id, donor.id), "geca_op1", detail, round_,
                    host.provenance.source)


def _find(tokens: Sequence[str], span: Sequence[str], start: int, end: int, blocked: set[int]) -> int:
    n = len(span)
    for i in range(start, end - n + 1):
        if tuple(tokens[i:i + n]) == tuple(span) and not blocked.intersection(range(i, i + n)):
            return i
    return -1


def replace_fragment(units: Units, old: Fragment, new: Fragment) -> tuple[list[str], dict[int, int], int]:
    """Every occurrence of ``old`` (its spans in order inside one clause) replaced by ``new``; the
    new tokens, old->new position of every kept token, and the number of replacements."""
    blocked = set(units.qty_pos)
    edits: list[tuple[int, int, tuple[str, ...]]] = []  # (start, end, replacement)
    for c_start, c_end in units.spans:
        pos = c_start
        while True:
            found, spans = pos, []
            for span in old:
                at = _find(units.tokens, span, found, c_end, blocked)
                if at < 0:
                    break
                spans.append((at, at + len(span)))
                found = at + len(span) + (1 if len(old) > 1 else 0)
            if len(spans) != len(old):
                break
            edits += [(a, b, tuple(rep)) for (a, b), rep in zip(spans, new)]
            pos = spans[-1][1]
    tokens: list[str] = []
    moved: dict[int, int] = {}
    prev = 0
    for a, b, rep in edits:
        for i in range(prev, a):
            moved[i] = len(tokens)
            tokens.append(units.tokens[i])
        tokens.extend(rep)
        prev = b
    for i in range(prev, len(units.tokens)):
        moved[i] = len(tokens)
        tokens.append(units.tokens[i])
    return tokens, moved, len(edits) // max(len(old), 1)


def operation2(problem: Problem, units: Units, old: Fragment, new: Fragment, detail: str,
               round_: int) -> Problem | str:
    """Every occurrence of ``old`` in the problem (question included) replaced by ``new``; same
    expression. Returns the new problem, or a reason string."""
    if len(old) != len(new):
        return "op2_span_count_differs"
    tokens, moved, count = replace_fragment(units, old, new)
    if count == 0:
        return "op2_fragment_not_found"
    slots = [Slot(moved[pos], j, q.value, q.surface)
             for j, (pos, q) in enumerate(zip(units.qty_pos, problem.quantities))]
    return assemble(tokens, slots, problem.expression, problem.language, (problem.id,), "geca_op2", detail,
                    round_, problem.provenance.source)


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
