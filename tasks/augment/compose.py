"""How operation 1 splices one problem into another, shared by its routes (geca.py's entity route,
zh_numbers.py's named numbers, literal.py's literal operator): which quantity a clause states, which problems
can donate, the splice itself with its expression, and the text tests every route applies to a pair (a rate
statement, a near duplicate, a text already made)."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator, Sequence

from mwp.expr import Qty, quantity_slots, substitute
from mwp.problem import Problem
from mwp.text import CLAUSE_END
from tasks.augment import zh
from tasks.augment.base import CandidateBatch, Slot, Units, assemble
from tasks.augment.en_rename import swap_pronouns
from tasks.augment.entities import _FUNCTION, rated_nouns


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
               detail: str, round_: int, rename: tuple | None = None) -> Problem | str:
    """q' = host with its statement ``clause`` replaced by the donor's narrative (all clauses but its
    question); expression = host's with the clause's quantity replaced by the donor's expression.
    ``rename`` (old, new[, gender]) renames the donor's protagonist in its narrative to the host's holder
    (English: and writes its pronouns in ``gender`` when one is given).
    Returns the new problem, or a reason string."""
    if clause >= len(host_units.spans) - 1:
        return "op1_question_clause"
    slot = used_quantity_in_clause(host, host_units, clause)
    if slot is None:
        return "op1_clause_not_one_used_quantity"
    if host.values.count(host.values[slot]) > 1:
        # An equation's number maps to the first quantity of that value (mwp.problem.map_numbers), so the
        # slot may stand for the other one too: "Michelle has 2 crayons. Janet has 2 crayons." is N0 + N0,
        # and replacing Michelle's 2 would replace Janet's as well.
        return "op1_value_twice_in_text"
    if not donor_ok(donor, donor_units):
        return "op1_donor_question_holds_quantity"
    start, end = host_units.spans[clause]
    narrative = list(donor_units.tokens[:donor_units.spans[-1][0]])
    if rename is not None:  # same token count: quantity positions do not move
        narrative = renamed(narrative, rename[0], rename[1], donor.language)
        if len(rename) > 2 and rename[2]:
            narrative = swap_pronouns(narrative, rename[2])  # English: the narrative told of a holder of another gender
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


def renamed(narrative: list[str], old: str, new: str, language: str) -> list[str]:
    """The narrative with name ``old`` written ``new`` (English: whole tokens, possessive kept; Chinese:
    the name's characters, ``old`` and ``new`` of one length so no quantity moves)."""
    if language != "zh":
        return [new + tok[len(old):] if tok.removesuffix("'s") == old else tok for tok in narrative]
    out, i = list(narrative), 0
    while i + len(old) <= len(out):
        if "".join(out[i:i + len(old)]) == old:
            out[i:i + len(old)] = list(new)
            i += len(old)
        else:
            i += 1
    return out


def is_rate(problem: Problem, start: int, end: int) -> bool:
    """A statement like "each box holds 36 peaches" (每箱36个) gives a rate, not an amount a narrative can
    replace."""
    if problem.language == "zh":
        return zh.is_rate(tuple(problem.tokens), start, end)
    return any(t.lower() in ("each", "every", "per") for t in problem.tokens[start:end])


def content_words(problem: Problem) -> frozenset[str]:
    """The words of a problem that say something (no function words; Chinese: jieba's content words)."""
    if problem.language == "zh":
        return frozenset(zh.clause_words(tuple(problem.tokens), 0, len(problem.tokens)))
    return frozenset(t.lower() for t in problem.tokens if t.isalpha() and t.lower() not in _FUNCTION)


def rated(problem: Problem, tokens: Sequence[str]) -> set[str]:
    if problem.language == "zh":
        return zh.rated_nouns(tuple(tokens))
    return rated_nouns(tokens)


class ContentWords:
    """``content_words`` of each problem, read once per operator call (jieba for Chinese is the cost)."""

    def __init__(self):
        self._seen: dict[int, tuple[Problem, frozenset[str]]] = {}

    def __call__(self, problem: Problem) -> frozenset[str]:
        hit = self._seen.get(id(problem))
        if hit is None or hit[0] is not problem:
            hit = self._seen[id(problem)] = (problem, content_words(problem))
        return hit[1]


def near_duplicate(host_words: frozenset[str], donor_words: frozenset[str]) -> bool:
    """True when the donor's narrative would repeat the host: more than half their content words shared."""
    return len(host_words & donor_words) > 0.5 * len(host_words | donor_words)


def book(out: Problem | str, batch: CandidateBatch, made_texts: set[str]) -> None:
    """A composition (or its refusal) into ``batch``: a text already in the pool or made by an earlier pair (a
    donor's name-swapped twin told of the host's holder composes the donor's text) is counted
    ``op1_text_made_already`` and takes no place under the host's cap (dedupe would drop it after the cap)."""
    if isinstance(out, str):
        batch.rejected[out] += 1
    elif out.key() in made_texts:
        batch.rejected["op1_text_made_already"] += 1
    else:
        made_texts.add(out.key())
        batch.candidates.append(out)


def drawn_pairs(clauses: Sequence[tuple], donors_of: Callable[[tuple], Sequence[tuple]], rng, attempts: int,
                cap: int, batch: CandidateBatch, made_before: int, made: set[tuple[int, int]],
                own: int | None = None) -> Iterator[tuple[tuple, tuple]]:
    """(clause, donor) pairs drawn for one host as the Chinese routes draw them: a clause at random, then one of
    its donors (``donors_of(clause)``) at random, each (clause index, donor index) once and never the host's own
    index ``own``, for at most ``attempts`` draws and until the batch holds ``cap`` candidates made since
    ``made_before``. ``made`` is the caller's, so that a refusal counted there can tell a drawn pair
    (bench/op1_refusals.py reads the caller's frame)."""
    for _ in range(attempts):
        if len(batch.candidates) - made_before >= cap:
            return
        clause = clauses[rng.randrange(len(clauses))]
        pool = donors_of(clause)
        donor = pool[rng.randrange(len(pool))]
        if donor[0] == own or (clause[0], donor[0]) in made:
            continue
        made.add((clause[0], donor[0]))
        yield clause, donor


def marked(tokens: Sequence[str], start: int, end: int, qty_pos: Sequence[int]) -> str:
    """The clause's text with each quantity written Q (the Chinese routes match their clauses on it)."""
    qty = set(qty_pos)
    return "".join("Q" if i in qty else tokens[i] for i in range(start, end))


def retold(donor: Problem, u: Units, replacements: Sequence[tuple[int, int, str]], question: bool = False) -> Problem:
    """The Chinese donor with narrative characters [start, end) written as the given text, for each replacement
    (character offsets into its narrative, one token a character but for quantities); quantities move with the
    text, the question is left as it was (operation 1 drops it) unless ``question`` (offsets then run over the
    whole text: a host retold), and the problem keeps its id and provenance."""
    tokens = donor.tokens
    q_start = len(tokens) if question else u.spans[-1][0]
    offsets, pos = [], 0
    for tok in tokens[:q_start]:
        offsets.append(pos)
        pos += len(tok)
    at = {off: i for i, off in enumerate(offsets)}
    starts = {at[s]: (at.get(e, q_start), new) for s, e, new in replacements if s in at}
    out, new_pos, i = [], {}, 0
    while i < len(tokens):
        if i in starts:
            i, new = starts[i]
            out.extend(new)
            continue
        new_pos[i] = len(out)
        out.append(tokens[i])
        i += 1
    slots = [Slot(new_pos[p], j, q.value, q.surface) for j, (p, q) in enumerate(zip(u.qty_pos, donor.quantities))]
    told = assemble(out, slots, donor.expression, donor.language, donor.provenance.parents, donor.provenance.operator,
                    donor.provenance.detail, donor.provenance.round, donor.provenance.source)
    return replace(told, id=donor.id, answer=donor.answer, provenance=donor.provenance)
