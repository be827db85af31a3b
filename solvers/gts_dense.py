"""Teacher-forced GTS decoding with shapes fixed by the batch alone: the step for CUDA graphs.

:func:`solvers.gts_teacher.teacher_forced_log_probs` runs each step on the rows that need each result
(the problems still decoding, left and right children apart, operator rows, merge levels), and reads the
targets back to the host to plan that: few operations of useful work, but each a kernel launched from
Python, about 14 us apiece on an H200 where the GPU is busy a tenth of the step (docs/solvers.md). This
pass computes the same log-probabilities with every step on all B rows and every tensor's shape fixed by
(B, T, L, K) alone: both goal kinds for every row, selected by mask; child goals for every row; the
merges of a step as K masked levels (K: the longest chain of merges a leaf closes in the batch); the
repeated-value rule at every step; the plan's indices given as tensors (:class:`DensePlan`, built on the
host from the targets before the pass, so nothing in the pass reads a device tensor back). It computes
more than it keeps, and is meant to be captured once per shape as a CUDA graph and replayed; eager, it
launches more kernels than the row-wise pass. Earlier steps' outputs live in StepStores (one gradient
buffer each, read by index) and the layers compute their weight gradients once a pass (DeferredLinears), as
in the row-wise pass; what they and autograd decide in Python depends on the shapes alone, so a capture
records the same kernels every time.

Dropout: one mask a site drawn for the whole pass (:class:`solvers.gts_teacher.PassDropout`, rows
``t * B + b``), as the row-wise pass does with its own row order; with dropout off both passes give the
same log-probabilities and gradients (tests/solvers/test_gts_dense.py, float64).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from solvers.device_copy import to_device
from solvers.gts_decoder import DecoderContext, GTSDecoder, state_dtype
from solvers.gts_plan import _plan_lists
from solvers.gts_teacher import PassDropout, repeated_value_leaves
from solvers.step_autograd import StepStore


@dataclass
class DensePlan:
    """Per step t and row b (tensors (L, B), merge ones (L, K, B)): the parent's row ``p * B + b`` among all
    steps' rows (p its position), whether the node is a right child, the row of the step that completed its
    left sibling, and per merge level k the merged operator's position, the row of the step that completed
    its left child, and whether the level merges at all."""

    parent: torch.Tensor
    is_right: torch.Tensor
    left_step: torch.Tensor
    merge_pos: torch.Tensor
    merge_left: torch.Tensor
    merge_valid: torch.Tensor

    @property
    def levels(self) -> int:
        return self.merge_pos.shape[1]

    def to(self, device: torch.device | str) -> "DensePlan":
        return DensePlan(*(to_device(getattr(self, f.name), device) for f in fields(self)))


def dense_plan(targets: list[list[int]], n_ops: int, length: int, levels: int | None = None,
               level_multiple: int = 1) -> DensePlan:
    """The :class:`DensePlan` of B prefix sequences (ids < n_ops are operators; each its own length, the
    batch padded to ``length``), on the host, with ``levels`` merge levels (default: as many as the longest
    chain, rounded up to a multiple of ``level_multiple``; more pad it). Padding positions point at step 0
    and merge nothing."""
    B = len(targets)
    parent, is_right, left_step, chains = _plan_lists(targets, n_ops, length)
    K = max(1, max((len(chain) for rows in chains for chain in rows), default=0))
    K = -(-K // level_multiple) * level_multiple
    if levels is not None:
        if levels < K:
            raise ValueError(f"{levels} merge levels: a leaf of the batch closes {K} operators")
        K = levels
    pos = [[[0] * B for _ in range(K)] for _ in range(length)]
    left = [[[0] * B for _ in range(K)] for _ in range(length)]
    valid = [[[False] * B for _ in range(K)] for _ in range(length)]
    for b in range(B):
        for t in range(length):
            for k, (p, s) in enumerate(chains[b][t]):
                pos[t][k][b], left[t][k][b], valid[t][k][b] = p, s, True

    def steps_first(rows):  # (B, L) lists -> (L, B) tensor
        return torch.tensor(rows).t().contiguous()

    row = torch.arange(B)
    return DensePlan(steps_first(parent) * B + row, steps_first(is_right), steps_first(left_step) * B + row,
                     torch.tensor(pos), torch.tensor(left) * B + row, torch.tensor(valid))


def plan_of_targets(target: torch.Tensor, target_mask: torch.Tensor, n_ops: int, length: int | None = None,
                    rows: int | None = None, level_multiple: int = 1) -> DensePlan:
    """The :class:`DensePlan` of a batch's (B, L) targets, read back to the host (a device read: call it before
    a captured pass, not inside), optionally padded to ``length`` positions and ``rows`` rows (the added rows
    plan nothing) and with its merge levels rounded up to a multiple of ``level_multiple``."""
    lengths = target_mask.sum(1).tolist()
    targets = [ids[:n] for ids, n in zip(target.tolist(), lengths)]
    targets += [[]] * ((rows or len(targets)) - len(targets))
    return dense_plan(targets, n_ops, target.shape[1] if length is None else length, level_multiple=level_multiple)


def dense_log_probs(dec: GTSDecoder, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                    qty_class: torch.Tensor | None = None, plan: DensePlan | None = None) -> torch.Tensor:
    """(B, L) log-probability of each target token given the gold prefix (0 at padding), as
    :func:`solvers.gts_teacher.teacher_forced_log_probs` computes it (``qty_class``: the repeated-value
    rule), in shapes fixed by the batch. ``plan`` (on ``target``'s device) is built from the targets when
    not given, which reads them back to the host: give it to keep the pass free of host reads."""
    B, L = target.shape
    device = target.device
    if plan is None:
        plan = plan_of_targets(target, target_mask, dec.n_ops).to(device)
    dtype = state_dtype(ctx.enc)
    rows = torch.arange(B, device=device)
    first_quantity = dec.n_ops + dec.n_constants
    n_numbers = ctx.num_emb.shape[1]
    tokens = target.t()  # (L, B)
    choosing = not_from = None
    if qty_class is not None:  # the row-wise pass's rule, for every step at once
        repeated, not_from = repeated_value_leaves(dec, target, target_mask, qty_class.to(device))
        not_from = not_from.transpose(0, 1)  # (L, B, Q)
        choosing = repeated.t()  # (L, B)
    drop = PassDropout(dec.dropout.p if dec.training else 0.0, L * B, device, dtype)
    # every merge's operator embedding, known in advance (the rule changes leaves only): (L, K, B, E)
    merge_labels = dec.op_labels(target.gather(1, plan.merge_pos.reshape(L * plan.levels, B).t()).t(), dtype)
    merge_labels = merge_labels.view(L, plan.levels, B, -1)
    # each step's left and right child goals and completed subtree, rows t * B + b, in stores later steps read by
    # index (solvers/step_autograd.py: one gradient buffer a store; stacking the steps so far at every step
    # would add every earlier step's gradient back one by one, kernels growing with the square of L)
    left_goals, right_goals, completed = StepStore(L * B), StepStore(L * B), StepStore(L * B)
    layers = dec.step_layers()  # each layer's weight gradient once over all steps (solvers/step_autograd.py)
    goal_contexts, chosen = [], []
    for t in range(L):
        def at(site, x, start=t * B):
            return drop.at(site, start, x)

        if t == 0:
            goal = dec.left_goal(ctx.problem, layers, at)
        else:
            from_left = dec.left_goal(left_goals.read(plan.parent[t]), layers, at)
            from_right = dec.right_goal(completed.read(plan.left_step[t]), right_goals.read(plan.parent[t]), layers, at)
            goal = torch.where(plan.is_right[t][:, None], from_right, from_left)
        goal_context = torch.cat([goal, dec.attend(ctx, goal, layers, at)], -1)  # (B, 2H)
        tok = tokens[t]
        if choosing is not None:  # a repeated value's target: its slot the step scores highest
            with torch.no_grad():
                scores = dec.quantity_scores(ctx.num_proj[:, dec.n_constants:], goal_context, at)
            best = scores.masked_fill(not_from[t], float("-inf")).argmax(1) + first_quantity
            tok = torch.where(choosing[t], best, tok)
        goal_contexts.append(goal_context)
        chosen.append(tok)
        left, right = dec.child_goals_with(goal_context, dec.op_labels(tok, dtype), layers, at)
        left_goals.append(left)
        right_goals.append(right)
        subtree = ctx.num_emb[rows, (tok - dec.n_ops).clamp(0, n_numbers - 1)]  # the leaf's embedding
        if t > 0:
            for k in range(plan.levels):  # bottom-up: the operator above, its left child and what is below
                merged = dec.merge_subtrees(merge_labels[t, k], completed.read(plan.merge_left[t, k]), subtree,
                                            layers, lambda site, x, k=k, start=t * B: drop.at(f"{site}{k}", start, x))
                subtree = torch.where(plan.merge_valid[t, k][:, None], merged, subtree)
        completed.append(subtree)
    # every step's scores at once: rows t * B + b
    logits = dec.logits_of(ctx.num_proj.repeat(L, 1, 1), ctx.num_mask.repeat(L, 1), torch.cat(goal_contexts),
                           layers, lambda site, x: drop.at(site, 0, x))
    logp = logits.log_softmax(-1).gather(1, torch.cat(chosen)[:, None]).view(L, B).t()
    return torch.where(target_mask, logp, torch.zeros((), dtype=logp.dtype, device=device))
