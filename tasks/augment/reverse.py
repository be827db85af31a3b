"""Reverse operation (paper 002, RODA; paper 001's logic-guided reorganization): a known quantity n
becomes the unknown, the old answer is written into the question clause, and the expression tree is
inverted along the path from the root to n (+ <-> -, * <-> /, with the non-commutative cases right:
L - n = A gives n = L - A, L / n = A gives n = L / A), then normalized with sympy from the tree.

Skipped, as paper 002 specifies: a value that appears twice in the text, a slot the expression uses
twice, a quantity under a power; constants are never candidates (they are not text quantities).

Text. The question clause becomes a statement with the answer; the clause that held n becomes the
question, moved to the end, with n replaced by an interrogative:
- Chinese: "多少" or "几" in the question clause -> the answer; n -> "多少".
- English: "How many X are/were ... ?" -> "There are/were A X ..."; "How many/much X do/does/did
  SUBJ VERB ... ?" -> "SUBJ VERB(tense) A X ..." (small verb table); n -> "how many" (before a
  word) or "how much". Anything else is counted as ``roda_question_not_rewritable``.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from mwp.expr import (
    BinOp,
    Expr,
    ExpressionError,
    NotSolvableError,
    Qty,
    evaluate,
    format_number,
    quantity_slots,
)
from mwp.parse import from_sympy, to_sympy
from mwp.problem import Problem
from tasks.augment.base import (
    CLAUSE_END,
    AugmentConfig,
    CandidateBatch,
    Slot,
    assemble,
    clause_units,
    rng_for,
)

_ANSWER_KEY = 10_000
_IRREGULAR = {"have": "had", "buy": "bought", "get": "got", "make": "made", "give": "gave", "eat": "ate",
              "take": "took", "sell": "sold", "spend": "spent", "find": "found", "pay": "paid", "put": "put",
              "read": "read", "grow": "grew", "catch": "caught", "bring": "brought", "win": "won",
              "lose": "lost", "run": "ran", "swim": "swam", "drive": "drove", "ride": "rode", "see": "saw",
              "do": "did", "go": "went", "draw": "drew", "cut": "cut", "leave": "left", "throw": "threw",
              "keep": "kept", "send": "sent", "write": "wrote", "drink": "drank", "bake": "baked"}
_BE = {"are", "were", "is", "was"}
_DO = {"do", "does", "did"}


def invert(expr: Expr, slot: int, target: Expr) -> Expr | None:
    """Solve ``expr = target`` for the slot used once in ``expr``; None under a power."""
    node = expr
    while not (isinstance(node, Qty) and node.index == slot):
        if not isinstance(node, BinOp) or node.op == "^":
            return None
        in_left = slot in quantity_slots(node.left)
        other = node.right if in_left else node.left
        if node.op == "+":
            target = BinOp("-", target, other)
        elif node.op == "*":
            target = BinOp("/", target, other)
        elif node.op == "-":
            target = BinOp("+", target, other) if in_left else BinOp("-", other, target)
        else:  # "/"
            target = BinOp("*", target, other) if in_left else BinOp("/", other, target)
        node = node.left if in_left else node.right
    return target


def normalize(expr: Expr) -> Expr:
    """factor(together(.)) with sympy, from the tree (never a string); the tree itself if sympy's
    form cannot be written back as an arithmetic tree."""
    import sympy

    symbols: dict = {}

    def leaf(node: Expr):
        if isinstance(node, Qty):
            sym = sympy.Symbol(f"n{node.index}", positive=True)
            symbols[sym] = node
            return sym
        return sympy.Rational(node.value.numerator, node.value.denominator)

    try:
        return from_sympy(sympy.factor(sympy.together(to_sympy(expr, leaf))), symbols)
    except (NotSolvableError, KeyError, TypeError):
        return expr


def _answer_tokens(value: Fraction, language: str) -> list[str]:
    text = format_number(value)
    if "/" in text and language == "zh":
        text = f"({text})"
    return [text]


def _declarative_zh(clause: list[str], answer: list[str]) -> list[str] | None:
    for i in range(len(clause) - 1):
        if clause[i:i + 2] == ["多", "少"]:
            return clause[:i] + answer + clause[i + 2:]
    if "几" in clause:
        i = clause.index("几")
        return clause[:i] + answer + clause[i + 1:]
    return None


def _past(verb: str) -> str:
    return _IRREGULAR.get(verb, verb + ("d" if verb.endswith("e") else "ed"))


def _third(verb: str) -> str:
    if verb == "have":
        return "has"
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")


def _declarative_en(clause: list[str], answer: list[str]) -> list[str] | None:
    words = [w.lower() for w in clause]
    if len(words) < 3 or words[0] != "how" or words[1] not in ("many", "much"):
        return None
    rest, i = clause[2:], 0
    while i < len(rest) and rest[i].lower() not in _BE | _DO:
        i += 1
    if i == len(rest):
        return None
    obj, aux, tail = rest[:i], rest[i].lower(), rest[i + 1:]
    if obj and obj[0].lower() == "money":
        obj, answer = [], ["$"] + answer
    if aux in _BE:
        return ["There", aux] + answer + obj + tail
    if len(tail) < 2:
        return None
    subject, verb, after = tail[0], tail[1].lower(), tail[2:]
    if not verb.isalpha():
        return None
    verb = {"did": _past(verb), "does": _third(verb), "do": verb}[aux]
    return [subject[:1].upper() + subject[1:], verb] + answer + obj + after


def _question_en(clause: list[tuple[str, int | None]], n_at: int) -> list[tuple[str, int | None]]:
    before, after = clause[:n_at], clause[n_at + 1:]
    if before and before[-1][0] == "$":
        return before[:-1] + [("how", None), ("much", None)] + after
    many = after and after[0][0].isalpha()
    return before + [("how", None), ("many" if many else "much", None)] + after


def reverse(problem: Problem, slot: int, round_: int) -> Problem | str:
    """The problem with quantity ``slot`` turned into the unknown; or a reason string."""
    values = problem.values
    if values.count(values[slot]) > 1:
        return "roda_value_twice_in_text"
    if quantity_slots(problem.expression).count(slot) != 1:
        return "roda_slot_not_used_once"
    answer = evaluate(problem.expression, values)
    if answer <= 0:
        return "roda_answer_not_positive"
    draft = invert(problem.expression, slot, Qty(_ANSWER_KEY))
    if draft is None:
        return "roda_power"
    units = clause_units(problem)
    q_start, q_end = units.spans[-1]
    n_pos = units.qty_pos[slot]
    c = max(k for k, (s, _) in enumerate(units.spans) if s <= n_pos)
    if c == len(units.spans) - 1:
        return "roda_quantity_in_question"
    if any(q_start <= p < q_end for p in units.qty_pos):
        return "roda_question_holds_quantity"
    tagged = [(t, i) for i, t in enumerate(units.tokens)]
    question = [t for t, _ in tagged[q_start:q_end]]
    if question and question[-1] in CLAUSE_END:
        question.pop()
    answer_tokens = _answer_tokens(answer, problem.language)
    rewrite = _declarative_zh if problem.language == "zh" else _declarative_en
    statement = rewrite(question, answer_tokens)
    if statement is None:
        return "roda_question_not_rewritable"
    c_start, c_end = units.spans[c]
    moved: list[tuple[str, int | None]] = list(tagged[c_start:c_end])
    if moved[-1][0] in CLAUSE_END:
        moved = moved[:-1]
    n_at = [i for _, i in moved].index(n_pos)
    if problem.language == "zh":
        new_q = moved[:n_at] + [("多", None), ("少", None)] + moved[n_at + 1:] + [("？", None)]
    else:
        new_q = _question_en(moved, n_at) + [("?", None)]
        new_q[0] = (new_q[0][0][:1].upper() + new_q[0][0][1:], new_q[0][1])
    keep = [(t, i) for t, i in tagged[:q_start] if not c_start <= i < c_end]
    stmt_end = "，" if problem.language == "zh" else "."
    out = keep + [(t, -1 if t == answer_tokens[0] else None) for t in statement] + [(stmt_end, None)] + new_q
    new_pos = {i: k for k, (_, i) in enumerate(out) if i is not None and i >= 0}
    ans_pos = next(k for k, (_, i) in enumerate(out) if i == -1)
    slots = [Slot(new_pos[p], j, q.value, q.surface) for j, (p, q) in enumerate(zip(units.qty_pos, problem.quantities))
             if j != slot and p in new_pos]
    slots.append(Slot(ans_pos, _ANSWER_KEY, answer, answer_tokens[0]))
    expr = normalize(draft)
    detail = f"unknown=N{slot} ({format_number(values[slot])}), answer {format_number(answer)} into the text"
    return assemble([t for t, _ in out], slots, expr, problem.language, (problem.id,), "reverse_operation",
                    detail, round_, problem.provenance.source)


def reverse_operation(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "reverse_operation")
    for problem in problems:
        if batch.full(cfg):
            break
        slots = sorted(set(quantity_slots(problem.expression)))
        rng.shuffle(slots)
        made = 0
        for slot in slots:
            if made >= cfg.per_problem_cap:
                break
            out = reverse(problem, slot, round_)
            if isinstance(out, str):
                batch.rejected[out] += 1
                continue
            target = problem.values[slot]
            if _value(out) != target:
                batch.rejected["roda_inversion_mismatch"] += 1
                continue
            batch.candidates.append(out)
            made += 1
    return batch


def _value(problem: Problem) -> Fraction | None:
    try:
        return evaluate(problem.expression, problem.values)
    except ExpressionError:  # verification counts the reason later; here it only must not match
        return None
