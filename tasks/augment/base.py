"""What every augmentation operator shares: the config, the batch it returns, stable seeds and ids,
clause units of a problem, and :func:`assemble`, which turns edited tokens back into a Problem with
quantities renumbered by their new order of appearance.

An operator is ``operator(problems, config, seed, round) -> CandidateBatch``. Its candidates are not
yet verified; :func:`tasks.augment.generate.generate_candidates` verifies, deduplicates and caps them.
"""
from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, NamedTuple, Sequence

from mwp.expr import Expr, Qty, quantity_slots, substitute
from mwp.problem import Problem, Provenance, Quantity
from mwp.text import CLAUSE_END, clause_spans, split_sentences  # noqa: F401 (CLAUSE_END re-exported)


@dataclass(frozen=True)
class AugmentConfig:
    """Everything one round of candidate generation depends on; the loop's settings model
    (flows/params.py) builds it once with these field names and defaults."""

    operators: tuple[str, ...] = ("geca_op1", "geca_op2")  # names in tasks/augment/registry.py
    per_problem_cap: int = 10  # candidates one source problem may yield per operator and round
    per_round_cap: int | None = 20000  # candidates one round may yield in all (None: no cap)
    seed: int = 0  # the run's seed; round r samples with seed * 1000 + r (round_seed)
    allow_unused_quantities: bool = True  # original data has text quantities the expression ignores
    reject_negative_answers: bool = True  # a word problem's answer is not negative

    def __post_init__(self) -> None:
        if self.per_problem_cap < 1:
            raise ValueError(f"per_problem_cap must be >= 1, got {self.per_problem_cap}")
        if self.per_round_cap is not None and self.per_round_cap < 1:
            raise ValueError(f"per_round_cap must be >= 1 or None, got {self.per_round_cap}")
        if not self.operators:
            raise ValueError("operators: name at least one operator")
        # the names are checked against the registry (tasks/augment/registry.check_operators) by the
        # settings model before any work and by generate_candidates: the operators import this module

    def round_seed(self, round_: int) -> int:
        """The seed operators of round ``round_`` sample with (one per round of one run)."""
        return self.seed * 1000 + round_


@dataclass
class CandidateBatch:
    candidates: list[Problem] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)  # reason -> count

    def full(self, cfg: "AugmentConfig") -> bool:
        """True once the operator has made as many candidates as the round allows it."""
        return cfg.per_round_cap is not None and len(self.candidates) >= cfg.per_round_cap

    def extend(self, other: "CandidateBatch") -> None:
        self.candidates.extend(other.candidates)
        self.rejected.update(other.rejected)


Operator = Callable[[Sequence[Problem], AugmentConfig, int, int], CandidateBatch]

# Words that decide the operation; no operator swaps them (the expression would no longer fit).
CUE_WORDS_EN = frozenset(
    "times more less fewer each every per left total all altogether together sum difference product "
    "quotient twice half double triple than remaining remain remains rest average more than".split())
CUE_CHARS_ZH = frozenset("多少倍每共剩比增减加乘除差和积商几平均折半总余又再各")
UNIT_WORDS = frozenset(
    "dollars dollar cents cent $ hours hour minutes minute seconds second days day weeks week months month "
    "years year miles mile meters meter km kilometers cm inches inch feet foot yards yard pounds pound kg "
    "grams gram liters liter gallons gallon ounces ounce percent % degrees".split())


def is_cue(token: str, language: str) -> bool:
    if language == "zh":
        return any(ch in CUE_CHARS_ZH for ch in token)
    return token.lower() in CUE_WORDS_EN


def stable_int(*parts: object) -> int:
    """A 64-bit integer from the parts' text, the same in every process (unlike ``hash``)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def rng_for(seed: int, round_: int, name: str) -> random.Random:
    return random.Random(stable_int("rng", seed, round_, name))


def new_problem_id(parents: Sequence[str], operator: str, detail: str) -> str:
    """Deterministic and unique per (parents, operator, detail): ``aug-<operator>-<12 hex>``."""
    digest = hashlib.sha1("\x1f".join([*parents, operator, detail]).encode("utf-8")).hexdigest()[:12]
    return f"aug-{operator}-{digest}"


class Units(NamedTuple):
    """A problem cut into clauses (at , ; and sentence ends); the last clause is the question."""

    tokens: list[str]  # flat tokens of the problem
    spans: list[tuple[int, int]]  # (start, end) of every clause in ``tokens``
    qty_pos: list[int]  # flat position of every quantity, in order


def clause_units(problem: Problem) -> Units:
    return Units(problem.tokens, clause_spans(problem.tokens), problem.quantity_positions())


def skeleton(units: Units, clause: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Tokens of a clause that environments see (no quantities, no final punctuation) and the
    segment of each (a new segment starts after every quantity; a span stays inside one)."""
    start, end = units.spans[clause]
    if end > start and units.tokens[end - 1] in CLAUSE_END:
        end -= 1
    qty = set(units.qty_pos)
    tokens, segments, seg = [], [], 0
    for pos in range(start, end):
        if pos in qty:
            seg += 1
            continue
        tokens.append(units.tokens[pos])
        segments.append(seg)
    return tuple(tokens), tuple(segments)


class Slot(NamedTuple):
    """A quantity of a new problem before renumbering: where it is and what it was called."""

    position: int  # flat token position in the new text
    key: int  # temporary slot number the draft expression uses for it
    value: Fraction
    surface: str


def renumber(expr: Expr, mapping: dict[int, int], missing: int) -> Expr:
    """Slots through ``mapping``; a slot without an entry becomes ``N{missing}`` (out of range, so
    verification rejects it as ``missing_quantity`` instead of the operator hiding it)."""
    return substitute(expr, {j: Qty(mapping.get(j, missing)) for j in set(quantity_slots(expr))})


def assemble(tokens: Sequence[str], slots: Sequence[Slot], draft: Expr, language: str,
             parents: Sequence[str], operator: str, detail: str, round_: int, source: str) -> Problem:
    """A new Problem from edited tokens: sentences re-split, quantities numbered by position, the
    draft expression's temporary slots renumbered to match. The answer is left for verification
    to compute (set to 0 here)."""
    sentences = [tuple(s) for s in split_sentences(list(tokens))]
    starts, offset = [], 0
    for sent in sentences:
        starts.append(offset)
        offset += len(sent)
    ordered = sorted(slots, key=lambda s: s.position)
    quantities, mapping = [], {}
    for new_index, slot in enumerate(ordered):
        s_idx = max(i for i, st in enumerate(starts) if st <= slot.position)
        quantities.append(Quantity(slot.value, s_idx, slot.position - starts[s_idx], slot.surface))
        mapping[slot.key] = new_index
    expr = renumber(draft, mapping, missing=len(quantities) + 1000)
    pid = new_problem_id(parents, operator, detail)
    prov = Provenance(source=source, parents=tuple(parents), operator=operator, round=round_, detail=detail)
    return Problem(pid, tuple(sentences), tuple(quantities), expr, Fraction(0), language, prov)
