"""The prefix grammar mask and the batched beam search, on hand-made log-probability tables."""
import math

import pytest
import torch

from solvers.prefix_decoding import PrefixGrammar, beam_search

TOKENS = ("+", "-", "*", "/", "^", "2", "N0", "N1", "N2")


def names(mask_row):
    return [t for t, ok in zip(TOKENS, mask_row.tolist()) if ok]


def test_grammar_kinds_and_mask():
    g = PrefixGrammar.from_tokens(TOKENS)
    assert g.is_operator.tolist() == [True] * 5 + [False] * 4
    assert g.is_constant.tolist() == [False] * 5 + [True] + [False] * 3
    assert g.slot_index.tolist() == [-1] * 6 + [0, 1, 2]
    one = torch.tensor([1])
    # one open slot, nothing written, two quantities, room for 3 tokens: operators, 2, N0, N1
    assert names(g.allowed(one, torch.tensor([0]), torch.tensor([2]), max_len=3)[0]) == list(TOKENS[:-1])
    # room for only 2 tokens: an operator would need 3, so leaves only
    assert names(g.allowed(one, torch.tensor([0]), torch.tensor([2]), max_len=2)[0]) == ["2", "N0", "N1"]
    # nothing open: the expression is complete, nothing may follow
    assert names(g.allowed(torch.tensor([0]), torch.tensor([3]), torch.tensor([3]), max_len=9)[0]) == []


def _table_step(state, prev):
    """Every step: "*" costs 0.1, N1 costs 1, everything else 5 (natural-log units)."""
    row = torch.full((len(TOKENS),), -5.0)
    row[TOKENS.index("*")] = -0.1
    row[TOKENS.index("N1")] = -1.0
    return row.expand(prev.shape[0], -1).clone(), state


def _search(beam_size, max_len=3):
    n = torch.tensor([2, 2])  # two problems, two quantities each
    bos = torch.zeros(2 * beam_size, dtype=torch.long)
    return beam_search(_table_step, lambda s, rows: s, None, bos, PrefixGrammar.from_tokens(TOKENS), n,
                       beam_size, max_len)


def test_greedy_takes_the_cheap_operator_and_pays_for_it():
    # beam 1: "*" (-0.1), then only leaves fit in 3 tokens: N1, N1 -> -2.1
    result = _search(beam_size=1)
    assert [[TOKENS[i] for i in ids] for ids in result.tokens] == [["*", "N1", "N1"]] * 2
    assert result.scores == [pytest.approx(-2.1, abs=1e-6)] * 2


def test_wider_beam_finds_the_single_leaf():
    # beam 2 keeps "N1" (-1.0, complete) next to "*" and "* N1" (-1.1), then "* N1 N1" (-2.1) loses
    result = _search(beam_size=2)
    assert [[TOKENS[i] for i in ids] for ids in result.tokens] == [["N1"]] * 2
    assert all(math.isclose(s, -1.0, abs_tol=1e-6) for s in result.scores)



def _two_speed_step(calls):
    """Problem 0 prefers N0 (settles at once); problem 1 prefers "*" until only leaves fit. The
    state is each row's problem index, so it must follow the rows through reorders and drops."""
    def step(state, prev):
        calls.append(state.shape[0])
        rows = torch.full((state.shape[0], len(TOKENS)), -5.0)
        quick = state == 0
        rows[quick, TOKENS.index("N0")] = -0.1
        rows[~quick, TOKENS.index("*")] = -0.01
        rows[~quick, TOKENS.index("N1")] = -0.5
        return rows, state
    return step


@pytest.mark.parametrize("beam_size", [1, 3])
def test_settled_problems_leave_the_batch(beam_size):
    grammar, n = PrefixGrammar.from_tokens(TOKENS), torch.tensor([2, 2, 2])
    problem_of_row = torch.tensor([0, 1, 0]).repeat_interleave(beam_size)  # problems 0 and 2 settle at once
    results, row_counts = {}, {}
    for drop in (True, False):
        calls = []
        results[drop] = beam_search(_two_speed_step(calls), lambda s, rows: s[rows], problem_of_row,
                                    torch.zeros(3 * beam_size, dtype=torch.long), grammar, n, beam_size, 9,
                                    drop_finished=drop)
        row_counts[drop] = calls
    assert results[True] == results[False]
    assert [[TOKENS[i] for i in ids] for ids in results[True].tokens][0] == ["N0"]
    assert len(row_counts[True]) > 3  # the slow problem kept the search going for several steps
    assert row_counts[False] == [3 * beam_size] * len(row_counts[False])
    assert row_counts[True][0] == 3 * beam_size and set(row_counts[True][1:]) == {beam_size}
    assert len(row_counts[True]) == len(row_counts[False])
