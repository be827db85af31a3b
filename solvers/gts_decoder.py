"""The goal-driven tree decoder of GTS (Xie & Sun 2019), batched across problems.

Any encoder can feed it (the GTS GRU in solvers/gts.py, a BERT encoder in solvers/bert_gts.py): it
needs encoder states ``enc`` (B, T, H), a text mask, one problem vector (B, H) (the root goal) and
the token positions of the quantities. It follows the public implementation's equations: a goal
``q`` is gated from its parent's child goal (left child) or from that plus the finished left
sibling's subtree embedding (right child); ``q`` attends over the encoder states; operators are
scored from ``[q; context]``, constants and quantities by attention of ``[q; context]`` against
learned constant embeddings and the encoder states at the quantity positions; an operator node
generates left/right child goals from ``[q; context; operator embedding]``; finished subtrees are
merged bottom-up into one embedding. Every ``W[a; b]`` over encoder positions is split into
``W_a a + W_b b`` with the encoder half computed once per batch (same function, less work), and
dropout on the number embeddings is drawn once per batch instead of once per node.

Batching, which the public code does not do (it walks per-example Python stacks):
- teacher forcing: the target prefix is known, so :func:`tree_plan` precomputes, per example and
  position, the parent, whether the node is a right child, the step at which its left sibling's
  subtree was completed, and the chain of merges a leaf triggers. Step ``t`` is then a handful of
  batched tensor ops for all B problems, gathering earlier steps' outputs by index;
- beam search (solvers/gts_beam.py): B x beam hypotheses as rows of one tensor, the node and
  subtree stacks as (rows, depth, H) tensors, constrained to valid prefix expressions over the
  problem's own quantity slots.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

NEG = -1e12  # logit of a masked choice (finite, so that an empty choice set cannot produce NaN)


@dataclass
class DecoderContext:
    """Per-batch tensors the decoder reads at every step (rows = problems, or problems x beam)."""

    enc: torch.Tensor  # (R, T, H) encoder states
    enc_proj: torch.Tensor  # (R, T, H) encoder half of the attention layer
    text_mask: torch.Tensor  # (R, T) bool, True on real tokens
    num_emb: torch.Tensor  # (R, C+Q, H) constant embeddings then quantity states (no dropout)
    num_proj: torch.Tensor  # (R, C+Q, H) number half of the scoring layer (dropout applied)
    num_mask: torch.Tensor  # (R, C+Q) bool, True on usable constants and quantities
    problem: torch.Tensor  # (R, H) root goal input

    def _fields(self) -> tuple[torch.Tensor, ...]:
        return (self.enc, self.enc_proj, self.text_mask, self.num_emb, self.num_proj, self.num_mask, self.problem)

    def select(self, index: torch.Tensor) -> "DecoderContext":
        return DecoderContext(*(t.index_select(0, index) for t in self._fields()))

    def head(self, n: int) -> "DecoderContext":
        """The first n rows (views, no copy)."""
        return DecoderContext(*(t[:n] for t in self._fields()))

    def repeat(self, k: int) -> "DecoderContext":
        return DecoderContext(*(t.repeat_interleave(k, dim=0) for t in self._fields()))


@dataclass
class TreePlan:
    """Index tensors for teacher-forced decoding (see :func:`tree_plan`)."""

    parent: torch.Tensor  # (B, L) long, parent position (0 for the root and padding)
    is_right: torch.Tensor  # (B, L) bool, node is its parent's right child
    left_step: torch.Tensor  # (B, L) long, for a right child: step that completed its left sibling
    merge_parent: torch.Tensor  # (B, L, K) long, operators merged after the leaf at step t, bottom-up
    merge_left_step: torch.Tensor  # (B, L, K) long, step that completed that operator's left child
    merge_valid: torch.Tensor  # (B, L, K) bool
    merges_at: list[int]  # per step: most merges any example does (loop bound, no device sync)


def tree_plan(targets: list[list[int]], n_ops: int, length: int) -> TreePlan:
    """Parents, sibling links and merge chains of prefix sequences (ids < n_ops are operators)."""
    B = len(targets)
    parent = [[0] * length for _ in range(B)]
    is_right = [[False] * length for _ in range(B)]
    left_step = [[0] * length for _ in range(B)]
    chains: list[list[list[tuple[int, int]]]] = [[[] for _ in range(length)] for _ in range(B)]
    for b, ids in enumerate(targets):
        open_ops: list[list[int]] = []  # [position, children seen]
        done: dict[int, int] = {}  # left child / root position -> step its subtree completed
        for t, tok in enumerate(ids):
            if open_ops:
                top = open_ops[-1]
                parent[b][t], is_right[b][t] = top[0], top[1] == 1
                top[1] += 1
                if top[1] == 2:
                    open_ops.pop()
                if is_right[b][t]:
                    left_step[b][t] = done[top[0] + 1]
            if tok < n_ops:
                open_ops.append([t, 0])
                continue
            node = t
            while is_right[b][node]:
                p = parent[b][node]
                chains[b][t].append((p, done[p + 1]))
                node = p
            done[node] = t
    merges_at = [max(len(chains[b][t]) for b in range(B)) for t in range(length)]
    K = max(1, max(merges_at, default=0))
    m_parent = torch.zeros(B, length, K, dtype=torch.long)
    m_left = torch.zeros(B, length, K, dtype=torch.long)
    m_valid = torch.zeros(B, length, K, dtype=torch.bool)
    for b in range(B):
        for t in range(length):
            for k, (p, s) in enumerate(chains[b][t]):
                m_parent[b, t, k], m_left[b, t, k], m_valid[b, t, k] = p, s, True
    return TreePlan(torch.tensor(parent), torch.tensor(is_right), torch.tensor(left_step),
                    m_parent, m_left, m_valid, merges_at)


def _gated(x: torch.Tensor) -> torch.Tensor:
    value, gate = x.chunk(2, dim=-1)
    return torch.tanh(value) * torch.sigmoid(gate)


def _pick(history: list[torch.Tensor], index: torch.Tensor) -> torch.Tensor:
    """history: per-step (n_s, D) tensors with n_s >= n rows; index (n,) step numbers -> (n, D).
    index_select keeps only sizes for backward (gather would keep the stacked history alive)."""
    n, steps = index.shape[0], len(history)
    flat = torch.stack([h[:n] for h in history], dim=1).reshape(-1, history[0].shape[-1])  # (n * steps, D)
    rows = torch.arange(n, device=index.device) * steps + index
    return flat.index_select(0, rows)


class GTSDecoder(nn.Module):
    def __init__(self, hidden_size: int, embedding_size: int, n_ops: int, n_constants: int, dropout: float):
        super().__init__()
        H, E = hidden_size, embedding_size
        self.n_ops, self.n_constants = n_ops, n_constants
        self.dropout = nn.Dropout(dropout)
        self.constants = nn.Parameter(torch.randn(n_constants, H))  # (C, H) learned constant embeddings
        self.goal_left = nn.Linear(H, 2 * H)  # value and gate of a left child / root goal
        self.goal_right = nn.Linear(2 * H, 2 * H)  # from [left subtree; parent's right goal]
        self.attn_goal = nn.Linear(H, H)
        self.attn_enc = nn.Linear(H, H, bias=False)
        self.attn_v = nn.Linear(H, 1, bias=False)
        self.score_leaf = nn.Linear(2 * H, H)
        self.score_num = nn.Linear(H, H, bias=False)
        self.score_v = nn.Linear(H, 1, bias=False)
        self.ops = nn.Linear(2 * H, n_ops)
        self.op_embedding = nn.Embedding(n_ops, E)
        self.generate = nn.Linear(2 * H + E, 4 * H)  # left value, left gate, right value, right gate
        self.merge = nn.Linear(2 * H + E, 2 * H)  # value and gate of a merged subtree

    # ------------------------------------------------------------ building blocks

    def context(self, enc: torch.Tensor, text_mask: torch.Tensor, problem: torch.Tensor,
                qty_positions: torch.Tensor, qty_mask: torch.Tensor) -> DecoderContext:
        B, _, H = enc.shape
        qty_states = enc.gather(1, qty_positions[:, :, None].expand(-1, -1, H))  # (B, Q, H)
        num_emb = torch.cat([self.constants[None].expand(B, -1, -1), qty_states], dim=1)  # (B, C+Q, H)
        num_mask = torch.cat([torch.ones(B, self.n_constants, dtype=torch.bool, device=enc.device), qty_mask], 1)
        return DecoderContext(enc, self.attn_enc(enc), text_mask, num_emb,
                              self.score_num(self.dropout(num_emb)), num_mask, problem)

    def left_goal(self, parent_goal: torch.Tensor) -> torch.Tensor:
        return _gated(self.goal_left(self.dropout(parent_goal)))

    def right_goal(self, left_subtree: torch.Tensor, parent_goal: torch.Tensor) -> torch.Tensor:
        return _gated(self.goal_right(self.dropout(torch.cat([left_subtree, parent_goal], -1))))

    def scores(self, ctx: DecoderContext, goal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits over [operators | constants | the batch's quantity slots] (R, n_ops+C+Q) and the
        attention context (R, H) of goals (R, H)."""
        q = self.dropout(goal)
        energy = self.attn_v(torch.tanh(self.attn_goal(q)[:, None] + ctx.enc_proj)).squeeze(-1)  # (R, T)
        weights = energy.masked_fill(~ctx.text_mask, NEG).softmax(-1)
        context = torch.bmm(weights[:, None], ctx.enc).squeeze(1)  # (R, H)
        leaf = self.dropout(torch.cat([goal, context], -1))  # (R, 2H)
        num = self.score_v(torch.tanh(self.score_leaf(leaf)[:, None] + ctx.num_proj)).squeeze(-1)  # (R, C+Q)
        num = num.masked_fill(~ctx.num_mask, NEG)
        return torch.cat([self.ops(leaf), num], -1), context

    def child_goals(self, goal: torch.Tensor, context: torch.Tensor, op_ids: torch.Tensor):
        """Left and right child goals (R, H) of operator nodes, and the operator embeddings (R, E)."""
        label = self.op_embedding(op_ids.clamp(0, self.n_ops - 1))
        out = self.generate(torch.cat([self.dropout(goal), self.dropout(context), self.dropout(label)], -1))
        left, right = out.chunk(2, dim=-1)
        return _gated(left), _gated(right), label

    def merge_subtrees(self, label: torch.Tensor, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return _gated(self.merge(self.dropout(torch.cat([label, left, right], -1))))

    def leaf_embedding(self, ctx: DecoderContext, ids: torch.Tensor) -> torch.Tensor:
        """Embedding (R, H) of constant/quantity output ids (operator ids give row 0, unused)."""
        index = (ids - self.n_ops).clamp(0, ctx.num_emb.shape[1] - 1)
        return ctx.num_emb.gather(1, index[:, None, None].expand(-1, 1, ctx.num_emb.shape[-1])).squeeze(1)

    def best_equal_slot(self, logits: torch.Tensor, tok: torch.Tensor, qty_class: torch.Tensor) -> torch.Tensor:
        """Target ids (R,) with each quantity slot replaced by the slot of the same value class
        (R, Q) that ``logits`` (R, n_ops+C+Q) score highest; operators and constants unchanged."""
        first = self.n_ops + self.n_constants
        slot = tok - first
        is_slot = slot >= 0
        cls = qty_class.gather(1, slot.clamp(min=0)[:, None])  # (R, 1)
        same = (qty_class == cls) & is_slot[:, None]  # (R, Q); includes the slot itself
        best = logits[:, first:].detach().masked_fill(~same, float("-inf")).argmax(1) + first
        return torch.where(is_slot, best, tok)

    # ------------------------------------------------------------ teacher forcing

    def token_log_probs(self, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                        qty_class: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L) log-probability of each target token given the gold prefix so far (0 at padding).

        With ``qty_class`` (B, Q) (:attr:`solvers.vocab.Batch.qty_class`), a target quantity whose
        value occurs at several positions of the text may come from any of them: each such leaf
        takes the equal-valued slot the model scores highest at that step, as its target and as
        the leaf embedding the tree goes on with (the public implementation's ``num_stack``). For
        training only; without it the given slots are scored as they are.

        Rows are sorted by target length (longest first) so that step t runs only on the first
        n_t rows still decoding: the work is proportional to the real number of target tokens."""
        B, L = target.shape
        lengths = target_mask.sum(1)
        order = torch.sort(lengths, descending=True, stable=True).indices
        target, ctx = target.index_select(0, order), ctx.select(order)
        choose_at = [False] * L  # steps where some row's target value occurs at several slots
        if qty_class is not None:
            qty_class = qty_class.to(target.device).index_select(0, order)
            slot = (target - self.n_ops - self.n_constants).clamp(0, qty_class.shape[1] - 1)  # (B, L)
            class_size = (qty_class[:, :, None] == qty_class[:, None, :]).sum(-1)  # (B, Q)
            repeated = (target >= self.n_ops + self.n_constants) & (class_size.gather(1, slot) > 1)
            choose_at = (repeated & target_mask.index_select(0, order)).any(0).tolist()
        sorted_lengths = lengths.index_select(0, order).tolist()
        active = [sum(1 for n in sorted_lengths if n > t) for t in range(L)]  # rows decoding at step t
        plan = tree_plan([target[b, :n].tolist() for b, n in enumerate(sorted_lengths)], self.n_ops, L)
        plan = TreePlan(*(x.to(target.device) for x in (plan.parent, plan.is_right, plan.left_step, plan.merge_parent,
                                                        plan.merge_left_step, plan.merge_valid)), plan.merges_at)
        left_goals, right_goals, labels, subtrees = [], [], [], []
        out = torch.zeros(B, L, device=target.device)
        for t in range(L):
            n = active[t]
            rows = ctx.head(n)
            if t == 0:
                goal = self.left_goal(rows.problem)
            else:
                parent = plan.parent[:n, t]
                goal = torch.where(plan.is_right[:n, t, None],
                                   self.right_goal(_pick(subtrees, plan.left_step[:n, t]), _pick(right_goals, parent)),
                                   self.left_goal(_pick(left_goals, parent)))
            logits, context = self.scores(rows, goal)
            tok = target[:n, t]
            if choose_at[t]:
                tok = self.best_equal_slot(logits, tok, qty_class[:n])
            logp = logits.float().log_softmax(-1).gather(1, tok[:, None]).squeeze(1)  # (n,)
            out = out.index_put((torch.arange(n, device=out.device), torch.full((n,), t, device=out.device)), logp)
            left, right, label = self.child_goals(goal, context, tok)
            left_goals.append(left)
            right_goals.append(right)
            labels.append(label)
            subtree = self.leaf_embedding(rows, tok)
            for k in range(plan.merges_at[t]):
                merged = self.merge_subtrees(_pick(labels, plan.merge_parent[:n, t, k]),
                                             _pick(subtrees, plan.merge_left_step[:n, t, k]), subtree)
                subtree = torch.where(plan.merge_valid[:n, t, k, None], merged, subtree)
            subtrees.append(subtree)
        return torch.zeros_like(out).index_copy(0, order, out)  # (B, L), back in input order


def tree_loss(decoder: GTSDecoder, ctx: DecoderContext, batch, any_equal_slot: bool) -> torch.Tensor:
    """Mean negative log-likelihood per target token of a :class:`solvers.vocab.Batch` (the public
    code's masked cross-entropy); ``any_equal_slot`` lets a repeated value come from any of its slots."""
    qty_class = batch.qty_class if any_equal_slot and batch.has_repeated_values else None
    logp = decoder.token_log_probs(ctx, batch.target, batch.target_mask, qty_class)
    return -logp.sum() / batch.target_mask.sum()
