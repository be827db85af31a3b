"""Scoring predictions against gold problems: answer accuracy, equation accuracy, invalid rate.

- answer accuracy: the predicted expression evaluates (with the problem's quantities) to the gold
  answer within 1e-4 relative (:func:`mwp.expr.answers_match`);
- equation accuracy: the normalized prefix equals the gold normalized prefix, where normalizing
  orders the two operands of every ``+`` and ``*`` canonically (``+ N1 N0`` == ``+ N0 N1``);
- invalid rate: predictions that fail to evaluate (malformed prefix, slot out of range, division by
  zero, overflow), reported separately from wrong answers.
"""
from __future__ import annotations

from typing import Sequence

from mwp.expr import COMMUTATIVE, BinOp, ExpressionError, Expr, answers_match, evaluate, from_prefix, to_prefix
from mwp.problem import Problem
from solvers.base import EvalReport, Prediction


def normalize(expr: Expr) -> Expr:
    """Operands of commutative operators sorted by their prefix text, recursively."""
    if not isinstance(expr, BinOp):
        return expr
    left, right = normalize(expr.left), normalize(expr.right)
    if expr.op in COMMUTATIVE and " ".join(to_prefix(right)) < " ".join(to_prefix(left)):
        left, right = right, left
    return BinOp(expr.op, left, right)


def prediction_expression(tokens: Sequence[str]) -> Expr | None:
    """The expression of prefix tokens, or None when they are malformed."""
    try:
        return from_prefix(list(tokens))
    except ExpressionError:
        return None


def score_one(problem: Problem, tokens: Sequence[str]) -> tuple[bool, bool, bool]:
    """(answer correct, equation correct, invalid) for one predicted prefix."""
    expr = prediction_expression(tokens)
    if expr is None:
        return False, False, True
    try:
        value = evaluate(expr, problem.values)
    except (ExpressionError, ZeroDivisionError, OverflowError, ValueError):
        return False, normalize(expr) == normalize(problem.expression), True
    return (answers_match(value, problem.answer), normalize(expr) == normalize(problem.expression), False)


def evaluate_predictions(problems: Sequence[Problem], predictions: Sequence[Prediction | Sequence[str]]) -> EvalReport:
    """Score predictions (``Prediction`` records or bare prefix token lists) against gold problems."""
    if len(problems) != len(predictions):
        raise ValueError(f"{len(problems)} problems but {len(predictions)} predictions")
    answers, equations, invalid = [], [], 0
    for problem, pred in zip(problems, predictions):
        tokens = pred.tokens if isinstance(pred, Prediction) else pred
        ok_answer, ok_equation, bad = score_one(problem, tokens)
        answers.append(ok_answer)
        equations.append(ok_equation)
        invalid += bad
    n = len(problems)
    return EvalReport(
        n=n,
        answer_acc=sum(answers) / n if n else 0.0,
        equation_acc=sum(equations) / n if n else 0.0,
        invalid_rate=invalid / n if n else 0.0,
        per_problem=tuple(answers),
    )
