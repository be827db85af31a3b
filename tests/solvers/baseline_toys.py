"""Eight hand-written problems and the checks every baseline solver's tests share (lstm,
transformer, bert-gts, gpt2). Expressions are short so a tiny model can learn them in seconds."""
from __future__ import annotations

from mwp.expr import is_valid_prefix
from mwp.problem import build_problem

RAW = [
    ("Tom has 3 apples and buys 5 more. How many apples does he have?", "x=3+5", 8),
    ("Ann had 9 pens and lost 4. How many pens are left?", "x=9-4", 5),
    ("A box holds 6 eggs. How many eggs are in 7 boxes?", "x=6*7", 42),
    ("Share 12 sweets among 3 kids equally. How many does each kid get?", "x=12/3", 4),
    ("Sam ran 2 miles, then 4 miles, then 1 mile. How far did he run?", "x=2+4+1", 7),
    ("A shirt costs 10 dollars. Jim buys 3 shirts and pays with 50 dollars. What is his change?", "x=50-10*3", 20),
    ("There are 8 rows of 5 chairs and 6 more chairs. How many chairs are there?", "x=8*5+6", 46),
    ("Lily read 15 pages on Monday and twice as many on Tuesday. How many pages did she read?", "x=15+15*2", 45),
]

# by hand: slots number the quantities in order of appearance; "twice" is the quantity 2 (a number word
# the equation uses, mwp/problem.py)
GOLD = [
    ["+", "N0", "N1"], ["-", "N0", "N1"], ["*", "N0", "N1"], ["/", "N0", "N1"],
    ["+", "+", "N0", "N1", "N2"], ["-", "N2", "*", "N0", "N1"], ["+", "*", "N0", "N1", "N2"],
    ["+", "N0", "*", "N0", "N1"],
]

# unseen problems with 1 and 4 quantities, for the validity checks
UNSEEN = [
    ("A dog eats 4 bones. How many bones?", "x=4", 4),
    ("Ed has 1 cat, 2 dogs, 3 fish and 4 birds. How many pets does he have?", "x=1+2+3+4", 10),
]


def toy_problems():
    return [build_problem(f"toy{i}", text, eq, ans, "toy") for i, (text, eq, ans) in enumerate(RAW)]


def unseen_problems():
    return [build_problem(f"unseen{i}", text, eq, ans, "toy") for i, (text, eq, ans) in enumerate(UNSEEN)]


def assert_valid_predictions(problems, predictions):
    """Every prediction is one complete prefix expression over the problem's own slots and known constants."""
    assert len(predictions) == len(problems)
    for problem, pred in zip(problems, predictions):
        assert is_valid_prefix(pred.tokens), (problem.id, pred.tokens)
        assert pred.expression is not None, (problem.id, pred.tokens)
        slots = [int(t[1:]) for t in pred.tokens if t.startswith("N")]
        assert all(s < len(problem.quantities) for s in slots), (problem.id, pred.tokens)


def fit_tracing_likelihood(solver, problems, config):
    """Fit on ``problems`` (validated on the same problems) and record, after the first and the last
    epoch, the summed log-likelihood of the gold expressions. Returns (TrainResult, [first, last])."""
    trace = []

    def after_epoch(stats):
        if stats.epoch in (1, config.epochs):
            trace.append(sum(lik.total for lik in solver.log_likelihood(problems)))

    result = solver.fit(problems, problems, config, on_epoch=after_epoch)
    return result, trace
