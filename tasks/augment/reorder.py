"""Problem reordering (papers 000/004): the question is joined to the narrative with a filler phrase,
same expression. Two forms, as in paper 000's examples:

- ``given_that``: "How many fish would Lucy have then given that Lucy has ... and she wants ...?"
- ``if_then``:    "If Lucy has ... and she wants ... then how many fish would Lucy have then?"

A question that opens with its own condition ("If she had 4 shelves ..., how many ...?") gives that
condition to the narrative. Chinese problems have their own reader (tasks/augment/zh_reorder.py):
"<question>？已知<statements>。" (form ``zh_given``), refused by counted ``reorder_zh_*`` reasons where the
question would not say the same thing read first. Both languages build the new problem the same way
(:func:`_moved`): every source quantity keeps its value and is renumbered by its new place in the text.
"""
from __future__ import annotations

from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, Slot, assemble, rng_for
from tasks.augment.entities import load_names
from tasks.augment.zh_reorder import reordered as reordered_zh

_END = {".", "!", "?"}


def _lower_first(part: list[tuple[str, int | None]], names: set[str]) -> list[tuple[str, int | None]]:
    if part and part[0][0] not in names and part[0][0] != "I" and part[0][0][:1].isupper():
        part = [(part[0][0].lower(), part[0][1])] + part[1:]
    return part


def _moved(problem: Problem, out: list[tuple[str, int | None]], form: str, round_: int) -> Problem:
    """The problem of tokens ``out`` (each with its source position, None where inserted): quantity slots
    re-indexed by their new order in the text, same expression."""
    new_pos = {old: i for i, (_, old) in enumerate(out) if old is not None}
    flat = problem.quantity_positions()
    slots = [Slot(new_pos[pos], j, q.value, q.surface) for j, (pos, q) in enumerate(zip(flat, problem.quantities))
             if pos in new_pos]
    return assemble([t for t, _ in out], slots, problem.expression, problem.language, (problem.id,),
                    "problem_reordering", form, round_, problem.provenance.source)


def reorder(problem: Problem, form: str, round_: int) -> Problem | str:
    """``problem`` reordered in ``form`` (English: ``given_that``/``if_then``; Chinese always ``zh_given``),
    or the reason it is refused."""
    if problem.language == "zh":
        out = reordered_zh(problem)
        return out if isinstance(out, str) else _moved(problem, out, "zh_given", round_)
    if len(problem.sentences) < 2:
        return "reorder_single_sentence"
    names = {n[0] for group in load_names().values() for n in group if len(n) == 1}
    offsets = [0]
    for sent in problem.sentences:
        offsets.append(offsets[-1] + len(sent))
    tagged = [[(tok, offsets[s] + i) for i, tok in enumerate(sent)] for s, sent in enumerate(problem.sentences)]
    question = tagged[-1]
    if question[-1][0] != "?":
        return "reorder_question_not_interrogative"
    question = question[:-1]
    narrative = [[t for t in sent if t[0] not in _END] for sent in tagged[:-1]]
    if question and question[0][0].lower() == "if":
        commas = [i for i, t in enumerate(question) if t[0] == ","]
        if not commas:
            return "reorder_question_condition_unclear"
        narrative.append(question[1:commas[0]])
        question = question[commas[0] + 1:]
    narrative = [_lower_first(part, names) for part in narrative if part]
    joined: list[tuple[str, int | None]] = []
    for k, part in enumerate(narrative):
        if k:
            joined.append(("and", None))
        joined.extend(part)
    if form == "given_that":
        if question and question[0][0][:1].islower():
            question = [(question[0][0][:1].upper() + question[0][0][1:], question[0][1])] + question[1:]
        out = question + [("given", None), ("that", None)] + joined + [("?", None)]
    else:
        out = [("If", None)] + joined + [("then", None)] + _lower_first(question, names) + [("?", None)]
    return _moved(problem, out, form, round_)


def problem_reordering(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "problem_reordering")
    for problem in problems:
        if batch.full(cfg):
            break
        form = rng.choice(("given_that", "if_then"))
        out = reorder(problem, form, round_)
        if isinstance(out, str):
            batch.rejected[out] += 1
        else:
            batch.candidates.append(out)
    return batch
