"""Grammar-constrained, batched beam search for the token-sequence solvers (LSTM, Transformer, GPT-2).

A prefix expression ends itself: it starts with one open slot, an operator opens one more, a leaf
closes one, and it is complete when none is open. So the decoders never learn an end token; the
mask below lets out only operators that can still be closed within ``max_len``, constants, and the
slots ``N0..N{n-1}`` of the problem at hand, and a hypothesis stops once no slot is open. Every
hypothesis is therefore a valid prefix expression over the problem's own quantities, trained or not.

A beam's score is the sum of the raw (unrenormalized) log-probabilities of its tokens, i.e. exactly
the teacher-forced log-likelihood of the expression it spells.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from mwp.expr import OPERATORS
from solvers.trainer import Hypothesis

_SLOT_RE = re.compile(r"N(\d+)")


@dataclass(frozen=True)
class PrefixGrammar:
    """What each output id is: ``is_operator[v]``, ``is_constant[v]``, ``slot_index[v]`` (-1: not a slot)."""

    is_operator: torch.Tensor  # (V,) bool
    is_constant: torch.Tensor  # (V,) bool
    slot_index: torch.Tensor  # (V,) long

    @classmethod
    def from_tokens(cls, tokens: Sequence[str], special: Sequence[str] = ()) -> "PrefixGrammar":
        """Operators, slots ``N{i}`` and numeric constants by name; ids in ``special`` (pad, bos...) never come out."""
        is_op, is_const, slot = [], [], []
        for tok in tokens:
            match = _SLOT_RE.fullmatch(tok)
            is_op.append(tok in OPERATORS)
            slot.append(int(match.group(1)) if match else -1)
            is_const.append(tok not in special and tok not in OPERATORS and not match and _is_number(tok))
        return cls(torch.tensor(is_op), torch.tensor(is_const), torch.tensor(slot, dtype=torch.long))

    def to(self, device) -> "PrefixGrammar":
        return PrefixGrammar(self.is_operator.to(device), self.is_constant.to(device), self.slot_index.to(device))

    def allowed(self, open_slots: torch.Tensor, length: torch.Tensor, n_quantities: torch.Tensor,
                max_len: int) -> torch.Tensor:
        """(N, V) bool: which ids may come next after ``length`` tokens with ``open_slots`` still open."""
        leaf = self.is_constant[None, :] | (
            (self.slot_index[None, :] >= 0) & (self.slot_index[None, :] < n_quantities[:, None]))  # (N, V)
        # an operator leaves open_slots + 1 slots, each needing at least one more token
        room = (length + 1 + open_slots + 1 <= max_len)[:, None]  # (N, 1)
        return (leaf | (self.is_operator[None, :] & room)) & (open_slots > 0)[:, None]


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def next_open_slots(grammar: PrefixGrammar, open_slots: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
    """Open slots after emitting ``token``: an operator adds one (fills one, opens two), a leaf fills one."""
    return open_slots + torch.where(grammar.is_operator[token], 1, -1)


@dataclass(frozen=True)
class BeamResult:
    tokens: list[list[int]]  # best hypothesis per problem (output ids, prefix order)
    scores: list[float]  # its summed log-probability


StepFn = Callable[[Any, torch.Tensor], tuple[torch.Tensor, Any]]  # (state, prev ids (N,)) -> (log-probs (N, V), state)
ReorderFn = Callable[[Any, torch.Tensor], Any]  # (state, row index (N,)) -> state


@torch.no_grad()
def beam_search(step: StepFn, reorder: ReorderFn, state: Any, bos: torch.Tensor, grammar: PrefixGrammar,
                n_quantities: torch.Tensor, beam_size: int, max_len: int, drop_finished: bool = True) -> BeamResult:
    """Batched beam search. ``state`` and ``bos`` (B*K,) are laid out problem-major: row b*K + k is
    beam k of problem b. ``n_quantities`` (B,) bounds the slots each problem may use.

    A problem whose answer is settled leaves the batch (``reorder`` is then called with fewer rows
    than it has), so a batch costs what its open problems cost, not its slowest problem's steps
    times the batch size; ``drop_finished=False`` keeps every row to the end (same answers)."""
    B, K = n_quantities.shape[0], beam_size
    device = bos.device
    grammar = grammar.to(device)
    nq = n_quantities.to(device).repeat_interleave(K)  # (B*K,)
    scores = torch.full((B, K), float("-inf"), device=device)
    scores[:, 0] = 0.0  # start from one live beam per problem
    open_slots = torch.ones(B * K, dtype=torch.long, device=device)
    history = torch.full((B * K, max_len), -1, dtype=torch.long, device=device)
    prev = bos
    alive = torch.arange(B, device=device)  # input index of each problem still searched
    out_tokens: list[list[int]] = [[] for _ in range(B)]
    out_scores: list[float] = [float("-inf")] * B
    for t in range(max_len):
        done = open_slots <= 0  # (B*K,)
        # log-probabilities are <= 0, so an open beam can only lose score: once a problem's best
        # finished beam scores at least as well as its best open one, its answer is settled
        best_done = torch.where(done, scores.view(-1), float("-inf")).view(B, K).max(1).values  # (B,)
        best_open = torch.where(done, float("-inf"), scores.view(-1)).view(B, K).max(1).values  # (B,)
        settled = best_done >= best_open  # (B,)
        if bool(settled.all()):
            break
        if drop_finished and bool(settled.any()):
            _collect(out_tokens, out_scores, alive, settled, scores, open_slots, history)
            kept = (~settled).nonzero().squeeze(1)  # (B',)
            rows = (kept[:, None] * K + torch.arange(K, device=device)).reshape(-1)  # (B' * K,)
            B, alive, scores = kept.numel(), alive[kept], scores[kept]
            nq, open_slots, history, prev, done = nq[rows], open_slots[rows], history[rows], prev[rows], done[rows]
            state = reorder(state, rows)
        logp, state = step(state, prev)  # (B*K, V)
        V = logp.shape[1]
        length = torch.full_like(open_slots, t)
        allowed = grammar.allowed(open_slots, length, nq, max_len)  # (B*K, V)
        logp = torch.where(allowed, logp.float(), torch.tensor(float("-inf"), device=device))
        # a finished hypothesis has a single continuation, id 0, that costs nothing and is not recorded
        stay = torch.full((V,), float("-inf"), device=device)
        stay[0] = 0.0
        logp = torch.where(done[:, None], stay[None, :], logp)
        cand = (scores.view(-1, 1) + logp).view(B, K * V)  # (B, K*V)
        scores, flat = cand.topk(K, dim=1)  # (B, K)
        beam = torch.div(flat, V, rounding_mode="floor")  # (B, K)
        token = flat % V  # (B, K)
        rows = ((torch.arange(B, device=device) * K)[:, None] + beam).view(-1)  # (B*K,) source row of each new beam
        was_done = done[rows]
        token = token.view(-1)
        history = history[rows]
        history[:, t] = torch.where(was_done, -1, token)
        open_slots = torch.where(was_done, open_slots[rows], next_open_slots(grammar, open_slots[rows], token))
        open_slots = torch.where(torch.isinf(scores.view(-1)), 0, open_slots)  # dead beams stop
        state = reorder(state, rows)
        prev = torch.where(was_done, prev[rows], token)
    # every problem still in the batch: settled, or max_len reached (what is finished is the answer)
    _collect(out_tokens, out_scores, alive, torch.ones(B, dtype=torch.bool, device=device), scores, open_slots, history)
    return BeamResult(out_tokens, out_scores)


def _collect(out_tokens: list[list[int]], out_scores: list[float], alive: torch.Tensor, which: torch.Tensor,
             scores: torch.Tensor, open_slots: torch.Tensor, history: torch.Tensor) -> None:
    """The best finished beam of each searched problem selected by ``which`` (B,), stored at its
    input index ``alive[b]``."""
    B, K = scores.shape
    finished = (open_slots <= 0).view(B, K)
    best = torch.where(finished, scores, float("-inf")).argmax(dim=1)  # (B,)
    for b in which.nonzero().squeeze(1).tolist():
        row = history[b * K + int(best[b])]
        out_tokens[int(alive[b])] = [int(v) for v in row if v >= 0]
        out_scores[int(alive[b])] = float(scores[b, best[b]])


class PrefixDecoderMixin:
    """``loss``/``token_log_probs``/``beam_search`` for an nn.Module that provides
    ``forward(batch) -> logits (B, L, V)`` teacher-forced on ``batch.target``, ``beam_start(batch, K)
    -> (state, bos ids (B*K,))``, ``beam_step(state, prev) -> (log-probs (B*K, V), state)``,
    ``beam_reorder(state, rows)``, and attributes ``grammar`` and ``max_output_len``."""

    def token_log_probs(self, batch) -> torch.Tensor:
        """(B, L) log-probability of each target token (0 where padded)."""
        logp = torch.log_softmax(self(batch).float(), dim=-1)  # (B, L, V)
        picked = logp.gather(-1, batch.target[..., None])[..., 0]  # (B, L)
        return picked * batch.target_mask

    def loss(self, batch) -> torch.Tensor:
        """Mean negative log-likelihood per target token."""
        return -self.token_log_probs(batch).sum() / batch.target_mask.sum().clamp(min=1)

    def beam_search(self, batch, beam_size: int) -> list[Hypothesis]:
        state, bos = self.beam_start(batch, beam_size)
        result = beam_search(self.beam_step, self.beam_reorder, state, bos, self.grammar,
                             batch.n_quantities, beam_size, self.max_output_len)
        return [Hypothesis(tuple(ids), score) for ids, score in zip(result.tokens, result.scores)]
