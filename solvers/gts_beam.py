"""Batched, constrained beam search for the GTS tree decoder.

All B x beam hypotheses are rows of one tensor; each row carries its node stack (pending goals,
with a right-child flag) and its subtree stack (operator embeddings and finished subtree
embeddings) as (rows, depth, H) tensors, so a decoding step is a few batched network calls plus
index bookkeeping, whatever B is. Hypotheses are constrained to valid prefix expressions: an
operator is allowed only while the expression can still be closed within ``max_length`` tokens,
and leaves only among the constants and the problem's own quantity slots. A problem stops once its
best finished hypothesis outscores every unfinished one (scores only fall, so the answer is the
same as searching to the end), and its rows leave the batch.
"""
from __future__ import annotations

import torch

from solvers.gts_decoder import DecoderContext, GTSDecoder
from solvers.trainer import Hypothesis

_INF = float("inf")


class _Stacks:
    """Per-row node and subtree stacks; grown on demand (depth rarely exceeds a few entries)."""

    def __init__(self, rows: int, hidden: int, emb: int, root_goal: torch.Tensor):
        dev = root_goal.device
        self.goal = root_goal.new_zeros(rows, 4, hidden)  # (R, D, H) pending goals
        self.goal[:, 0] = root_goal
        self.right = torch.zeros(rows, 4, dtype=torch.bool, device=dev)  # goal belongs to a right child
        self.sp = torch.ones(rows, dtype=torch.long, device=dev)  # node stack size
        self.sub = root_goal.new_zeros(rows, 4, hidden)  # (R, D, H) finished subtree embeddings
        self.label = root_goal.new_zeros(rows, 4, emb)  # (R, D, E) operator embeddings
        self.terminal = torch.zeros(rows, 4, dtype=torch.bool, device=dev)  # entry is a finished subtree
        self.esp = torch.zeros(rows, dtype=torch.long, device=dev)  # subtree stack size

    def reorder(self, index: torch.Tensor) -> None:
        for name in ("goal", "right", "sp", "sub", "label", "terminal", "esp"):
            setattr(self, name, getattr(self, name).index_select(0, index))

    def reserve(self, extra: int) -> None:
        need = int(torch.maximum(self.sp, self.esp).max()) + extra
        depth = self.goal.shape[1]
        if need <= depth:
            return
        grow = max(need - depth, depth)
        for name in ("goal", "right", "sub", "label", "terminal"):
            t = getattr(self, name)
            pad = t.new_zeros((t.shape[0], grow) + tuple(t.shape[2:]))
            setattr(self, name, torch.cat([t, pad], 1))


@torch.no_grad()
def beam_search(decoder: GTSDecoder, ctx: DecoderContext, n_quantities: torch.Tensor, beam_size: int,
                max_length: int, drop_finished: bool = True) -> list[Hypothesis]:
    """Best finished hypothesis per problem. ``drop_finished=False`` keeps every row to the last
    step (the earlier behaviour; bench/beam_speed.py measures it as the baseline)."""
    n_problems, K = ctx.problem.shape[0], beam_size
    B, R = n_problems, n_problems * K  # problems still searched, and their rows
    n_ops = decoder.n_ops
    ctx = ctx.repeat(K)
    dev = ctx.problem.device
    rows = torch.arange(R, device=dev)
    alive = torch.arange(B, device=dev)  # input index of each problem still searched
    allowed = torch.cat([torch.ones(R, n_ops, dtype=torch.bool, device=dev), ctx.num_mask], 1)  # (R, V)
    V = allowed.shape[1]
    st = _Stacks(R, ctx.problem.shape[1], decoder.op_embedding.embedding_dim, ctx.problem)
    scores = torch.full((B, K), -_INF, device=dev)
    scores[:, 0] = 0.0  # all beams start identical: expand only the first
    tokens = torch.zeros(R, max_length, dtype=torch.long, device=dev)
    length = torch.zeros(R, dtype=torch.long, device=dev)
    need = torch.ones(R, dtype=torch.long, device=dev)  # open slots left to fill
    finished = torch.zeros(R, dtype=torch.bool, device=dev)
    out: list[Hypothesis | None] = [None] * n_problems
    for step in range(max_length):
        top = (st.sp - 1).clamp(min=0)
        parent_goal, is_right = st.goal[rows, top], st.right[rows, top]
        left_subtree = st.sub[rows, (st.esp - 1).clamp(min=0)]
        goal = torch.where(is_right[:, None], decoder.right_goal(left_subtree, parent_goal), decoder.left_goal(parent_goal))
        logits, context = decoder.scores(ctx, goal)
        logp = logits.log_softmax(-1)  # (R, V), float32 (GTSDecoder.scores)
        ok = allowed.clone()
        ok[:, :n_ops] &= (need + 1 <= max_length - step - 1)[:, None]  # room left to close an operator
        logp = logp.masked_fill(~ok, -_INF)
        keep = torch.full_like(logp, -_INF)
        keep[:, 0] = 0.0  # a finished hypothesis carries over unchanged, once
        logp = torch.where(finished[:, None], keep, logp)
        cand = (scores.reshape(R, 1) + logp).reshape(B, K * V)
        scores, flat = cand.topk(K, dim=1)  # (B, K)
        src = (flat // V + torch.arange(B, device=dev)[:, None] * K).reshape(R)
        tok = (flat % V).reshape(R)
        st.reorder(src)
        goal, context = goal[src], context[src]
        tokens, length, need, finished = tokens[src], length[src], need[src], finished[src]
        active = ~finished & torch.isfinite(scores.reshape(R))
        is_op, is_leaf = active & (tok < n_ops), active & (tok >= n_ops)
        tokens[rows, length.clamp(max=max_length - 1)] = torch.where(active, tok, tokens[rows, length.clamp(max=max_length - 1)])
        length = length + active
        _apply(decoder, ctx, st, rows, goal, context, tok, is_op, is_leaf)
        need = need + is_op.long() - is_leaf.long()
        finished = finished | (active & (need == 0))
        flat_scores = scores.reshape(R)
        best_done = torch.where(finished, flat_scores, torch.full_like(flat_scores, -_INF)).reshape(B, K).max(1).values
        best_open = torch.where(~finished, flat_scores, torch.full_like(flat_scores, -_INF)).reshape(B, K).max(1).values
        done = best_done >= best_open  # (B,) the answer of these problems can no longer change
        if bool(done.all()):
            break
        if not drop_finished or not bool(done.any()):
            continue
        _collect(out, alive, done, scores, finished, tokens, length)
        # Drop the finished problems' rows: a batch then costs what its open problems cost, not
        # what its slowest problem costs times the batch size.
        kept = (~done).nonzero().squeeze(1)  # (B',)
        kept_rows = (kept[:, None] * K + torch.arange(K, device=dev)).reshape(-1)  # (B' * K,)
        B, R = kept.numel(), kept.numel() * K
        rows, alive, scores = torch.arange(R, device=dev), alive[kept], scores[kept]
        ctx, allowed = ctx.select(kept_rows), allowed[kept_rows]
        st.reorder(kept_rows)
        tokens, length, need, finished = tokens[kept_rows], length[kept_rows], need[kept_rows], finished[kept_rows]
    # every problem still in the batch: settled, or max_length reached (what is finished is the answer)
    _collect(out, alive, torch.ones(B, dtype=torch.bool, device=dev), scores, finished, tokens, length)
    assert all(h is not None for h in out)
    return out  # type: ignore[return-value]


def _collect(out: list[Hypothesis | None], alive: torch.Tensor, which: torch.Tensor, scores: torch.Tensor,
             finished: torch.Tensor, tokens: torch.Tensor, length: torch.Tensor) -> None:
    """The best finished hypothesis of each searched problem selected by ``which`` (B,) into
    ``out`` at its input index (empty ids and score -inf when none finished)."""
    B, K = scores.shape
    flat_scores = torch.where(finished, scores.reshape(-1), torch.full_like(scores.reshape(-1), -_INF)).reshape(B, K)
    best = flat_scores.argmax(1)
    for b in which.nonzero().squeeze(1).tolist():
        r = b * K + int(best[b])
        n = int(length[r]) if bool(finished[r]) else 0
        out[int(alive[b])] = Hypothesis(ids=tuple(tokens[r, :n].tolist()), score=float(flat_scores[b, best[b]]))


def _apply(decoder: GTSDecoder, ctx: DecoderContext, st: _Stacks, rows: torch.Tensor, goal: torch.Tensor,
           context: torch.Tensor, tok: torch.Tensor, is_op: torch.Tensor, is_leaf: torch.Tensor) -> None:
    """Pop the decoded node; an operator pushes its right then left child goal and its embedding; a
    leaf merges with every finished left sibling below it and pushes the finished subtree."""
    st.reserve(2)
    acted = is_op | is_leaf
    st.sp = st.sp - acted.long()
    left, right, label = decoder.child_goals(goal, context, tok)
    op_rows = rows[is_op]
    if op_rows.numel():
        sp, esp = st.sp[op_rows], st.esp[op_rows]
        st.goal[op_rows, sp], st.right[op_rows, sp] = right[op_rows], True
        st.goal[op_rows, sp + 1], st.right[op_rows, sp + 1] = left[op_rows], False
        st.label[op_rows, esp], st.terminal[op_rows, esp] = label[op_rows], False
        st.sp[op_rows] += 2
        st.esp[op_rows] += 1
    leaf_rows = rows[is_leaf]
    if not leaf_rows.numel():
        return
    cur = decoder.leaf_embedding(ctx, tok)  # (R, H)
    while True:
        top = (st.esp - 1).clamp(min=0)
        can = is_leaf & (st.esp >= 2) & st.terminal[rows, top]
        if not bool(can.any()):
            break
        merged = decoder.merge_subtrees(st.label[rows, (top - 1).clamp(min=0)], st.sub[rows, top], cur)
        cur = torch.where(can[:, None], merged, cur)
        st.esp = st.esp - 2 * can.long()
    esp = st.esp[leaf_rows]
    st.sub[leaf_rows, esp], st.terminal[leaf_rows, esp] = cur[leaf_rows], True
    st.esp[leaf_rows] += 1
