"""SD: a synthetic data set that isolates compositions, built by the rule table of paper 003 (appendix C).

A seed problem whose clauses hold one quantity each, in order, and end with the question, and whose
expression is one of the 13 seed templates of Table 2, is rewritten:

* decomposition (rules 1-9): the seed goes to test; its two parts go to train. Each part keeps some
  seed clauses and gets one placeholder clause (Delta) from the indexed problem with the part's
  template that is most similar to the seed. A Delta in question position is that problem's question;
  a Delta elsewhere is its clause holding the same quantity, whose number becomes the value of the
  seed sub-expression it stands for, so the two parts chain to the seed's answer. Test label
  ``structural``.
* reformulation (rules 10-13): the seed's clauses with a donor question of the other template form
  q'. If no training problem of q''s template shares a content word with q', the seed goes to train
  and q' to test (a known template with constituents never seen with it). Test label ``lexical``.

Similarity is the Jaccard overlap of content words (tokens minus the stop words shipped in
mwp/resources); a best similarity of 0 abandons the seed. Clauses are sentences split further at
commas and semicolons (Math23K problems are mostly one sentence) by the cutter every layer shares,
:func:`mwp.text.clause_spans`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from mwp.expr import COMMUTATIVE, BinOp, Expr, ExpressionError, Num, Qty, evaluate, format_number, to_prefix
from mwp.problem import Problem, Provenance, find_quantities
from mwp.text import clause_spans

STRUCTURAL, LEXICAL = "structural", "lexical"
DELTA = None  # a placeholder clause in a part layout
_RESOURCES = Path(__file__).resolve().parents[2] / "mwp" / "resources"


def _n(i: int) -> Qty:
    return Qty(i)


def _op(op: str, left: Expr, right: Expr) -> BinOp:
    return BinOp(op, left, right)


ONE = Num(Fraction(1), "1")


@dataclass(frozen=True)
class Part:
    layout: tuple[int | None, ...]  # seed clause index per clause of the part; DELTA = placeholder
    expression: Expr  # over the part's quantities in clause order
    delta_value: Expr | None = None  # seed sub-expression (over seed slots) a non-question Delta holds


@dataclass(frozen=True)
class Rule:
    id: int
    kind: str  # "decomposition" or "reformulation"
    seed: Expr  # over the seed's quantities in clause order
    parts: tuple[Part, ...]


def _decomposition(rule_id: int, outer: str, inner: str) -> Rule:
    """Rules 2-4 and 6-9: ``(n1 inner n2) outer n3`` -> {s1, s2, Delta}: n1 inner n2 and
    {Delta, s3, s4}: n1 outer n2 (Delta holds the inner value)."""
    inner_expr = _op(inner, _n(0), _n(1))
    return Rule(rule_id, "decomposition", _op(outer, inner_expr, _n(2)), (
        Part((0, 1, DELTA), _op(inner, _n(0), _n(1))),
        Part((DELTA, 2, 3), _op(outer, _n(0), _n(1)), inner_expr),
    ))


def _one_minus(rule_id: int, outer: str) -> Rule:
    """Rules 1 and 5: ``n1 outer (1 - n2)`` -> {s1, Delta, s3}: n1 outer n2 (Delta holds 1 - n2) and
    {s2, Delta}: 1 - n1."""
    inner_expr = _op("-", ONE, _n(1))
    return Rule(rule_id, "decomposition", _op(outer, _n(0), inner_expr), (
        Part((0, DELTA, 2), _op(outer, _n(0), _n(1)), inner_expr),
        Part((1, DELTA), _op("-", ONE, _n(0))),
    ))


def _reformulation(rule_id: int, seed_op: str, new_op: str) -> Rule:
    return Rule(rule_id, "reformulation", _op(seed_op, _n(0), _n(1)), (Part((0, 1, DELTA), _op(new_op, _n(0), _n(1))),))


RULES: tuple[Rule, ...] = (
    _one_minus(1, "*"),
    _decomposition(2, "/", "*"),
    _decomposition(3, "+", "*"),
    _decomposition(4, "*", "*"),
    _one_minus(5, "/"),
    _decomposition(6, "/", "-"),
    _decomposition(7, "*", "+"),
    _decomposition(8, "*", "/"),
    _decomposition(9, "-", "*"),
    _reformulation(10, "+", "-"),
    _reformulation(11, "-", "+"),
    _reformulation(12, "*", "/"),
    _reformulation(13, "/", "*"),
)


def canonical_key(expr: Expr) -> str:
    """Expression text with the operands of ``+`` and ``*`` ordered: the index key of a template."""
    if not isinstance(expr, BinOp):
        return to_prefix(expr)[0]
    left, right = canonical_key(expr.left), canonical_key(expr.right)
    if expr.op in COMMUTATIVE and right < left:
        left, right = right, left
    return f"({left} {expr.op} {right})"


_RULE_BY_SEED = {canonical_key(rule.seed): rule for rule in RULES}


def rule_for(problem: Problem) -> Rule | None:
    """The rule whose seed template and clause shape ``problem`` has, if any."""
    rule = _RULE_BY_SEED.get(canonical_key(problem.expression))
    n_slots = len({n.index for n in _slots(rule.seed)}) if rule else 0
    return rule if rule and has_shape(problem, n_slots) else None


def _slots(expr: Expr) -> list[Qty]:
    if isinstance(expr, BinOp):
        return _slots(expr.left) + _slots(expr.right)
    return [expr] if isinstance(expr, Qty) else []


# ---------------------------------------------------------------- clauses and similarity


def clauses(problem: Problem) -> list[tuple[str, ...]]:
    """Sentences split further after commas and semicolons, by the shared cutter
    (:func:`mwp.text.clause_spans`: punctuation alone joins the clause before it)."""
    out: list[tuple[str, ...]] = []
    for sentence in problem.sentences:
        out.extend(tuple(sentence[start:end]) for start, end in clause_spans(list(sentence)))
    return out


def quantity_clauses(problem: Problem) -> list[tuple[int, int]]:
    """(clause index, token index in the clause) of every quantity."""
    bounds, start = [], 0
    for clause in clauses(problem):
        bounds.append((start, start + len(clause)))
        start += len(clause)
    out = []
    for pos in problem.quantity_positions():
        for ci, (lo, hi) in enumerate(bounds):
            if lo <= pos < hi:
                out.append((ci, pos - lo))
                break
    return out


def has_shape(problem: Problem, n_quantities: int) -> bool:
    """``n_quantities`` quantities, quantity i alone in clause i, then one question clause."""
    where = quantity_clauses(problem)
    return (len(clauses(problem)) == n_quantities + 1 and len(where) == n_quantities
            and [c for c, _ in where] == list(range(n_quantities)))


@lru_cache(maxsize=None)
def stop_words(language: str) -> frozenset[str]:
    path = _RESOURCES / f"stopwords_{language}.txt"
    if not path.is_file():
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.startswith("#"))


def content_words(problem: Problem) -> frozenset[str]:
    stops = stop_words(problem.language)
    if problem.language == "zh":  # characters are too coarse: pairs of adjacent content characters
        chars = [t if t not in stops and "\u4e00" <= t[0] <= "\u9fff" else "" for t in problem.tokens]
        return frozenset(a + b for a, b in zip(chars, chars[1:]) if a and b)
    return frozenset(t.lower() for t in problem.tokens if t.isalpha() and len(t) > 1 and t.lower() not in stops)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two content-word sets (0 when either is empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# ---------------------------------------------------------------- building


@dataclass
class SDResult:
    train: list[Problem] = field(default_factory=list)
    test: list[Problem] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # test id -> structural / lexical
    rules: Counter = field(default_factory=Counter)  # rule id -> seeds used
    abandoned: Counter = field(default_factory=Counter)  # reason -> seeds abandoned


class IndexedCorpus:
    """Template key -> problems of that template in the rule shape, with their content words."""

    def __init__(self, problems: Sequence[Problem]):
        self.by_key: dict[str, list[Problem]] = {}
        self.words: dict[str, frozenset[str]] = {}
        for p in problems:
            n = len(set(q.index for q in _slots(p.expression)))
            if has_shape(p, n):
                self.by_key.setdefault(canonical_key(p.expression), []).append(p)
            self.words[p.id] = content_words(p)

    def most_similar(self, expression: Expr, to: Problem) -> tuple[Problem | None, float]:
        """Indexed problem of ``expression``'s template closest to ``to`` (ties: first indexed)."""
        target = self.words.get(to.id) or content_words(to)
        best, best_score = None, 0.0
        for cand in self.by_key.get(canonical_key(expression), ()):
            if cand.id == to.id:
                continue
            score = similarity(target, self.words[cand.id])
            if score > best_score:
                best, best_score = cand, score
        return best, best_score


def instantiate(seed: Problem, rule: Rule, part: Part, donor: Problem, pid: str, operator: str) -> Problem:
    """One synthetic problem: the part's layout over seed clauses and the donor's Delta clause."""
    seed_clauses, donor_clauses = clauses(seed), clauses(donor)
    out: list[tuple[str, ...]] = []
    for position, source in enumerate(part.layout):
        if source is not None:
            out.append(seed_clauses[source])
            continue
        clause = list(donor_clauses[position])
        if part.delta_value is not None:
            value = evaluate(part.delta_value, seed.values)
            if value <= 0:
                raise ExpressionError(f"seed {seed.id}: rule {rule.id} intermediate value {value} is not positive")
            (_, token), = [w for w in quantity_clauses(donor) if w[0] == position]
            clause[token] = format_number(value)
        out.append(tuple(clause))
    quantities = find_quantities(out, seed.language)
    expected = len(set(q.index for q in _slots(part.expression)))
    if len(quantities) != expected:
        raise ExpressionError(f"seed {seed.id}: rule {rule.id} part has {len(quantities)} quantities, expected {expected}")
    answer = evaluate(part.expression, [q.value for q in quantities])
    if answer <= 0:
        raise ExpressionError(f"seed {seed.id}: rule {rule.id} part answer {answer} is not positive")
    return Problem(
        id=pid, sentences=tuple(out), quantities=tuple(quantities), expression=part.expression,
        answer=answer, language=seed.language,
        provenance=Provenance(source=f"sd:{seed.provenance.source}", parents=(seed.id, donor.id), operator=operator,
                              round=0, detail=f"rule {rule.id}"),
    )


def _fill(seed: Problem, rule: Rule, corpus: IndexedCorpus, result: SDResult) -> list[Problem] | None:
    made = []
    for number, part in enumerate(rule.parts):
        donor, score = corpus.most_similar(part.expression, seed)
        if donor is None:
            result.abandoned["no_similar_donor"] += 1
            return None
        pid = f"{seed.id}/sd{rule.id}" + ("ab"[number] if rule.kind == "decomposition" else "")
        try:
            made.append(instantiate(seed, rule, part, donor, pid, f"sd_{rule.kind}"))
        except ExpressionError:
            result.abandoned["bad_part"] += 1
            return None
    return made


def build_sd(pool: Sequence[Problem], corpus: Sequence[Problem] | None = None) -> SDResult:
    """SD from ``pool`` (seeds), instantiating placeholders from ``corpus`` (default: the pool).
    Decompositions first, then reformulations checked against the training side built so far."""
    index = IndexedCorpus(corpus if corpus is not None else pool)
    result = SDResult()
    reformulation_seeds = []
    for seed in pool:
        rule = rule_for(seed)
        if rule is None:
            continue
        if rule.kind == "reformulation":
            reformulation_seeds.append((seed, rule))
            continue
        parts = _fill(seed, rule, index, result)
        if parts is None:
            continue
        result.test.append(seed)
        result.labels[seed.id] = STRUCTURAL
        result.train.extend(parts)
        result.rules[rule.id] += 1
    train_words: dict[str, list[frozenset[str]]] = {}
    for p in result.train:
        train_words.setdefault(canonical_key(p.expression), []).append(content_words(p))
    test_words: dict[str, list[frozenset[str]]] = {}
    for seed, rule in reformulation_seeds:
        made = _fill(seed, rule, index, result)
        if made is None:
            continue
        new, = made
        new_words, seed_words = content_words(new), content_words(seed)
        seen = train_words.get(canonical_key(new.expression), [])
        clash = test_words.get(canonical_key(seed.expression), [])
        if any(similarity(new_words, w) > 0 for w in seen) or any(similarity(seed_words, w) > 0 for w in clash):
            result.abandoned["constituents_seen_with_template"] += 1
            continue
        result.train.append(seed)
        result.test.append(new)
        result.labels[new.id] = LEXICAL
        result.rules[rule.id] += 1
        train_words.setdefault(canonical_key(seed.expression), []).append(seed_words)
        test_words.setdefault(canonical_key(new.expression), []).append(new_words)
    return result
