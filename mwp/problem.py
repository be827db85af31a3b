"""The Problem record every layer shares, and how a raw (text, equation, answer) becomes one.

A problem is a list of tokenized sentences (the last one holds the question), the quantities found
in the text (value, position, surface form), the equation as an expression tree over quantity slots
``N0..Nk`` (numbered by order of appearance) and constants, the answer, and its provenance.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Iterable, Sequence

from mwp.expr import (
    BinOp,
    EvaluationError,
    Expr,
    ExpressionError,
    Num,
    NumberTooLargeError,
    Qty,
    answers_match,
    check_size,
    evaluate,
    format_number,
    from_prefix,
    iter_nodes,
    leaf_from_token,
    rebuild,
    shorten,
    to_infix,
    to_prefix,
)
from mwp.parse import equation_to_expression, parse_number
from mwp.text import (NUMBER_WORDS, conditional_number_word, detect_language, detokenize, is_number_token,
                      split_sentences, tokenize)

# Numbers an equation may use without their appearing in the text (GTS keeps 1 and 3.14 for
# Math23K; MAWPS also needs unit conversions).
DEFAULT_CONSTANTS: tuple[Fraction, ...] = tuple(
    Fraction(c) for c in ("1", "2", "3.14", "10", "100", "1000", "12", "60", "7", "24", "3", "4", "0.01", "0.5", "0.25", "0.1", "0.05", "25")
)


class ProblemError(ValueError):
    """A record that cannot become a Problem; ``reason`` is its skip label."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    sentence: int  # index of the sentence holding it
    token: int  # index of its token inside that sentence
    surface: str  # as written ("40%", "3.5", "(1/2)")


@dataclass(frozen=True)
class Provenance:
    source: str  # dataset or generator name
    parents: tuple[str, ...] = ()  # ids of the problems it was made from
    operator: str = "original"  # augmentation operator that made it
    round: int = 0  # augmentation round (0 = original data)
    detail: str = ""  # operator-specific note (fragments used, rule id, ...)


@dataclass(frozen=True)
class Problem:
    id: str
    sentences: tuple[tuple[str, ...], ...]
    quantities: tuple[Quantity, ...]
    expression: Expr  # over slots Qty(i) -> quantities[i], and constants Num
    answer: Fraction
    language: str = "en"
    provenance: Provenance = field(default_factory=lambda: Provenance("unknown"))

    @property
    def tokens(self) -> list[str]:
        return [tok for sent in self.sentences for tok in sent]

    @property
    def text(self) -> str:
        return detokenize(self.tokens, self.language)

    @property
    def question(self) -> tuple[str, ...]:
        return self.sentences[-1]

    def quantity_positions(self) -> list[int]:
        """Flat token index of every quantity, in order."""
        offsets = [0]
        for sent in self.sentences[:-1]:
            offsets.append(offsets[-1] + len(sent))
        return [offsets[q.sentence] + q.token for q in self.quantities]

    @property
    def values(self) -> list[Fraction]:
        return [q.value for q in self.quantities]

    def prefix(self) -> list[str]:
        return to_prefix(self.expression)

    def key(self) -> str:
        """Normalized text + expression, for deduplication."""
        body = " ".join(t.lower() for t in self.tokens) + " || " + " ".join(self.prefix())
        return hashlib.sha1(body.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sentences": [list(s) for s in self.sentences],
            "quantities": [[format_number(q.value), q.sentence, q.token, q.surface] for q in self.quantities],
            "expression": self.prefix(),
            "answer": format_number(self.answer),
            "language": self.language,
            "provenance": {
                "source": self.provenance.source,
                "parents": list(self.provenance.parents),
                "operator": self.provenance.operator,
                "round": self.provenance.round,
                "detail": self.provenance.detail,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Problem":
        """The problem :meth:`to_dict` wrote. A record that is not one (a missing field, a value of the
        wrong type, a number beyond :data:`mwp.expr.MAX_EXACT_BITS`) raises :class:`ProblemError`
        ``bad_record``, never another error type."""
        try:
            return cls._from_dict(data)
        except ProblemError:
            raise
        except KeyError as err:
            raise ProblemError("bad_record", f"problem record without field {err}") from err
        except (ValueError, TypeError, AttributeError, OverflowError) as err:  # ExpressionError is a ValueError
            raise ProblemError("bad_record", f"not a problem record: {type(err).__name__}: {shorten(str(err))}") from err

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> "Problem":
        prov = data.get("provenance", {})
        if not isinstance(prov, dict):
            raise TypeError(f"provenance is a {type(prov).__name__}")
        return cls(
            id=_stored_id(data["id"]),
            sentences=tuple(_stored_tokens(s) for s in data["sentences"]),
            quantities=tuple(Quantity(_stored_number(v), int(s), int(t), str(surf)) for v, s, t, surf in data["quantities"]),
            expression=from_prefix(data["expression"]),
            answer=_stored_number(data["answer"]),
            language=data.get("language", "en"),
            provenance=Provenance(
                source=prov.get("source", "unknown"),
                parents=tuple(prov.get("parents", ())),
                operator=prov.get("operator", "original"),
                round=int(prov.get("round", 0)),
                detail=prov.get("detail", ""),
            ),
        )


def _stored_id(raw: Any) -> str:
    """An id is a string (a number is read as its text); a list or an object is no id."""
    if isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
        return str(raw)
    raise TypeError(f"id {shorten(repr(raw))} is not a string")


def _stored_tokens(sentence: Any) -> tuple[str, ...]:
    if not isinstance(sentence, (list, tuple)) or not all(isinstance(tok, str) for tok in sentence):
        raise TypeError("a sentence is not a list of strings")
    return tuple(sentence)


def _stored_number(raw: Any) -> Fraction:
    """A number as :meth:`Problem.to_dict` writes it (``format_number`` text) or a JSON integer;
    bounded like every value (no ``1e999999999``)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return check_size(Fraction(raw))
    node = leaf_from_token(raw) if isinstance(raw, str) else None
    if not isinstance(node, Num):
        raise TypeError(f"{shorten(repr(raw))} is not a number")
    return node.value


def find_quantities(sentences: Sequence[Sequence[str]], language: str = "en") -> list[Quantity]:
    out = []
    for s_idx, sent in enumerate(sentences):
        for t_idx, tok in enumerate(sent):
            if language == "en" and tok.lower() in NUMBER_WORDS:
                out.append(Quantity(Fraction(NUMBER_WORDS[tok.lower()]), s_idx, t_idx, tok))
            elif is_number_token(tok):
                try:
                    value = parse_number(tok)
                except ExpressionError:
                    continue
                out.append(Quantity(value, s_idx, t_idx, tok))
    return out


def with_word_quantities(sentences: Sequence[Sequence[str]], quantities: Sequence[Quantity],
                         values: Iterable[Fraction]) -> list[Quantity]:
    """``quantities`` plus, for each of ``values`` (numbers the equation uses that no quantity gives),
    the first number word of the text with that value that counts only where the equation uses it
    ("twice", "half", "a dozen": :func:`mwp.text.conditional_number_word`), in order of appearance."""
    wanted = set(values)
    taken = {(q.sentence, q.token) for q in quantities}
    out = list(quantities)
    for s_idx, sent in enumerate(sentences):
        for t_idx, tok in enumerate(sent):
            value = conditional_number_word(sent, t_idx)
            if value is not None and value in wanted and (s_idx, t_idx) not in taken:
                out.append(Quantity(value, s_idx, t_idx, tok))
                wanted.discard(value)
    return sorted(out, key=lambda q: (q.sentence, q.token))


def require_quantity(expr: Expr, shown: str) -> None:
    """A label must use a quantity of its text: one built of constants alone teaches a solver nothing
    about the text (:class:`ProblemError` ``label_uses_no_quantity``)."""
    if not any(isinstance(node, Qty) for node in iter_nodes(expr)):
        raise ProblemError("label_uses_no_quantity", f"equation {shown} uses none of the text's numbers, "
                                                     "only constants")


def map_numbers(expr: Expr, quantities: Sequence[Quantity],
                constants: Iterable[Fraction] | None = DEFAULT_CONSTANTS) -> Expr:
    """Replace every literal number of ``expr`` by the slot of the text quantity with that value
    (the first one when a value appears twice in the text); numbers not in the text stay constants
    when allowed (any number when ``constants`` is None), else :class:`ProblemError`
    ``number_missing_from_text``."""
    first_slot: dict[Fraction, int] = {}
    for i, q in enumerate(quantities):
        first_slot.setdefault(q.value, i)
    allowed = None if constants is None else set(constants)

    fraction_slot = {q.value: i for i, q in reversed(list(enumerate(quantities))) if "/" in q.surface}

    def whole_fraction(node: BinOp) -> Expr | None:
        if (node.op == "/" and isinstance(node.left, Num) and isinstance(node.right, Num)
                and node.right.value != 0):
            # "(7/8)" in Math23K is one quantity of the text, written as a division in the equation.
            value = node.left.value / node.right.value
            if value in fraction_slot:
                return Qty(fraction_slot[value])
        return None

    def leaf(node: Expr) -> Expr:
        if isinstance(node, Num):
            if node.value in first_slot:
                return Qty(first_slot[node.value])
            if allowed is None or node.value in allowed:
                return node
            raise ProblemError("number_missing_from_text", f"number {node.text or format_number(node.value)} is not in the text")
        return node

    return rebuild(expr, leaf, whole_fraction)


def parse_answer(raw: Any) -> Fraction:
    """The exact value of a record's answer: a number, or a string :func:`parse_number` reads.
    :class:`ProblemError` ``bad_answer`` otherwise (NaN and infinities included), ``number_too_large``
    beyond :data:`mwp.expr.MAX_EXACT_BITS` or :data:`mwp.parse.MAX_NUMBER_DIGITS` digits."""
    try:
        if isinstance(raw, bool):
            raise ProblemError("bad_answer", f"answer {raw!r} is not a number")
        if isinstance(raw, Fraction):
            return check_size(raw)
        if isinstance(raw, int):
            return check_size(Fraction(raw))
        if isinstance(raw, float):
            if not math.isfinite(raw):
                raise ProblemError("bad_answer", f"answer {raw!r} is not a finite number")
            return check_size(Fraction(str(raw)))
        if isinstance(raw, str):
            return parse_number(raw.strip())
    except NumberTooLargeError as err:
        raise ProblemError(err.reason, f"answer {shorten(str(raw))}: {err}") from err
    except ExpressionError as err:
        raise ProblemError("bad_answer", f"answer {shorten(str(raw))!r} is not a number") from err
    raise ProblemError("bad_answer", f"answer {shorten(repr(raw))} is not a number")


def _short(value: Fraction) -> str:
    """A value for a message; one beyond the float range by its size."""
    try:
        return f"{float(value):g}"
    except OverflowError:
        return f"a number of about {len(str(abs(value.numerator) // value.denominator))} digits"


def answer_agrees(value: Fraction, answer: Fraction, answer_text: str | None = None) -> bool:
    """Within 1e-4 relative, or equal after rounding ``value`` to the digits ``answer_text`` shows
    (MAWPS prints 83.33 for 500/6)."""
    if answers_match(value, answer):
        return True
    if answer_text and "." in answer_text:
        digits = len(answer_text.rstrip("%").split(".")[1])
        try:
            return round(float(value), digits) == round(float(answer), digits)
        except OverflowError:  # a value beyond the float range cannot round to a printed answer
            return False
    return False


def build_problem(
    pid: str,
    text: str,
    equation: "str | Expr",
    answer: Any,
    source: str,
    language: str | None = None,
    constants: Iterable[Fraction] = DEFAULT_CONSTANTS,
    check_answer: bool = True,
) -> Problem:
    """Tokenize, find quantities, parse the equation (solving for x when needed; an expression tree
    is used as given), check the answer, add the number words the equation uses ("twice" for a 2 no
    digit gives), map numbers to slots and require at least one slot. Raises :class:`ProblemError`
    with a skip reason."""
    language = language or detect_language(text)
    sentences = split_sentences(tokenize(text, language))
    quantities = find_quantities(sentences, language)
    gold = parse_answer(answer)
    try:
        # A tree is taken as the expression of x (readers of prefix formats build one directly).
        raw_expr = equation if not isinstance(equation, str) else equation_to_expression(equation, gold)
    except ExpressionError as err:
        raise ProblemError(err.reason, f"{err}") from err
    shown = repr(equation) if isinstance(equation, str) else repr(shorten(to_infix(raw_expr)))  # a tree as infix text
    try:
        value = evaluate(raw_expr)
    except EvaluationError as err:
        raise ProblemError(err.reason, f"equation {shown}: {err}") from err
    answer_text = answer if isinstance(answer, str) else (repr(answer) if isinstance(answer, float) else None)
    if check_answer and not answer_agrees(value, gold, answer_text):
        raise ProblemError("answer_mismatch", f"equation {shown} gives {_short(value)}, answer is {answer!r}")
    if language == "en":  # number words the equation uses ("twice" for its 2) join the quantities
        unmapped = {n.value for n in iter_nodes(map_numbers(raw_expr, quantities, None)) if isinstance(n, Num)}
        if unmapped:
            quantities = with_word_quantities(sentences, quantities, unmapped)
    expr = map_numbers(raw_expr, quantities, constants)
    require_quantity(expr, shown)
    return Problem(
        id=str(pid),
        sentences=tuple(tuple(s) for s in sentences),
        quantities=tuple(quantities),
        expression=expr,
        answer=value if check_answer else gold,
        language=language,
        provenance=Provenance(source=source),
    )


def with_expression(problem: Problem, expr: Expr, **changes: Any) -> Problem:
    """A copy with a new expression and its recomputed exact answer."""
    return replace(problem, expression=expr, answer=evaluate(expr, problem.values), **changes)


def write_jsonl(problems: Iterable[Problem], path) -> int:
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for p in problems:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def read_problems_jsonl(path) -> list[Problem]:
    """Read problems written by :func:`write_jsonl` (the project's own format)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(Problem.from_dict(json.loads(line)))
            except (KeyError, ValueError, TypeError) as err:
                raise ValueError(f"{path}:{line_no}: not a problem record: {err}") from err
    return out


def origins(problems: Sequence[Problem], known: Sequence[Problem]) -> dict[str, tuple[str, ...]]:
    """Each problem's original ancestors: follow ``provenance.parents`` through ``known`` (the pool the
    problems were made from) until problems of round 0. A parent missing from ``known`` counts as an
    origin itself, so a lineage is never lost, only cut short."""
    by_id = {p.id: p for p in known}
    memo: dict[str, frozenset[str]] = {}

    def roots(pid: str, seen: frozenset[str]) -> frozenset[str]:
        if pid in memo:
            return memo[pid]
        parent = by_id.get(pid)
        if parent is None or parent.provenance.round == 0 or not parent.provenance.parents or pid in seen:
            out = frozenset((pid,))
        else:
            out = frozenset().union(*(roots(q, seen | {pid}) for q in parent.provenance.parents))
        memo[pid] = out
        return out

    return {p.id: tuple(sorted(frozenset().union(*(roots(q, frozenset()) for q in p.provenance.parents))))
            if p.provenance.parents else (p.id,) for p in problems}
