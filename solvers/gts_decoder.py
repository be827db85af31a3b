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
  batched tensor ops over the problems still decoding, gathering earlier steps' outputs by index, and
  each op runs only on the rows that use its result (:class:`StepRows`: left or right goal, child goals
  for operator tokens, the k-th merge for leaves closing k+1 operators);
- beam search (solvers/gts_beam.py): B x beam hypotheses as rows of one tensor, the node and
  subtree stacks as (rows, depth, H) tensors, constrained to valid prefix expressions over the
  problem's own quantity slots.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from solvers.dropout import Dropout
from solvers.step_autograd import DeferredLinears, row_prefixes

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

    def prefixes(self, sizes: list[int]) -> dict[int, "DecoderContext"]:
        """``{n: self.head(n)}`` for each distinct n, sliced once (solvers/step_autograd.py's
        row_prefixes: in backward each prefix's gradient is added into rows [:n] of one buffer)."""
        parts = [row_prefixes(t, sizes) for t in self._fields()]
        return {n: DecoderContext(*(part[n] for part in parts)) for n in parts[0]}


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


def _plan_lists(targets: list[list[int]], n_ops: int, length: int):
    """Per example and position: parent, is-right-child, left sibling's completion step, merge chain."""
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
    return parent, is_right, left_step, chains


def tree_plan(targets: list[list[int]], n_ops: int, length: int) -> TreePlan:
    """Parents, sibling links and merge chains of prefix sequences (ids < n_ops are operators)."""
    B = len(targets)
    parent, is_right, left_step, chains = _plan_lists(targets, n_ops, length)
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


@dataclass
class StepRows:
    """Which rows each teacher-forced step computes what for (rows = examples sorted longest first, the
    first ``n`` of them decoding at a step), so that no step computes a value it then throws away:

    - a left child's goal from its parent's left goal, a right child's from its parent's right goal and
      its left sibling's subtree (``left``/``right`` rows; ``unsort`` puts [left; right] back in row order);
    - child goals and the operator embedding only for rows whose token is an operator (``ops``);
    - the k-th merge only for rows whose leaf closes at least k+1 operators (``merge_rows[k]``).

    Operator outputs are stored compactly, step after step, so an earlier step's value of row b is row
    ``op_offset[p] + (position of b among step p's operator rows)`` of their concatenation; subtrees are
    stored for every decoding row, row ``sub_offset[s] + b``. Index tensors are built once per batch
    from the known targets, as slices of one tensor (one host-to-device copy, no device sync inside
    the loop)."""

    left: list[torch.Tensor]  # per step: rows that are left children (or the root)
    right: list[torch.Tensor]  # per step: rows that are right children
    unsort: list[torch.Tensor]  # per step: permutation of [left; right] back to row order
    left_goal_at: list[torch.Tensor]  # per step, left rows: flat index of the parent's left goal
    right_goal_at: list[torch.Tensor]  # per step, right rows: flat index of the parent's right goal
    sibling_at: list[torch.Tensor]  # per step, right rows: flat subtree index of the left sibling
    ops: list[torch.Tensor]  # per step: rows whose token is an operator
    merge_rows: list[list[torch.Tensor]]  # per step, per merge level: rows merging
    merge_label_at: list[list[torch.Tensor]]  # ... flat index of the merged operator's embedding
    merge_left_at: list[list[torch.Tensor]]  # ... flat subtree index of its left child
    n_left: list[int]  # per step: len(left), known without reading a tensor
    n_right: list[int]  # per step: len(right)
    token_at: torch.Tensor  # (N,) flat index b * L + t of every decoded token, step after step


def step_rows(targets: list[list[int]], n_ops: int, length: int, active: list[int],
              device: torch.device | str = "cpu") -> StepRows:
    """:class:`StepRows` of prefix sequences sorted by length, longest first (``active[t]`` of them
    decoding at step t)."""
    parent, is_right, left_step, chains = _plan_lists(targets, n_ops, length)
    op_pos: list[dict[int, int]] = []  # per step: row -> position among the step's operator rows
    op_offset, sub_offset = [], []
    n_op_total = n_sub_total = 0
    for t in range(length):
        rows = [b for b in range(active[t]) if targets[b][t] < n_ops]
        op_pos.append({b: i for i, b in enumerate(rows)})
        op_offset.append(n_op_total)
        sub_offset.append(n_sub_total)
        n_op_total += len(rows)
        n_sub_total += active[t]

    flat: list[int] = []  # every index list, one after the other; each becomes a slice of one tensor
    spans: list[tuple[int, int]] = []

    def tensor(values: list[int]) -> int:
        spans.append((len(flat), len(flat) + len(values)))
        flat.extend(values)
        return len(spans) - 1

    def op_at(b: int, p: int) -> int:
        return op_offset[p] + op_pos[p][b]

    out = StepRows(*([] for _ in range(12)), token_at=None)  # type: ignore[arg-type]
    for t in range(length):
        n = active[t]
        lefts = [b for b in range(n) if not is_right[b][t]]
        rights = [b for b in range(n) if is_right[b][t]]
        order = lefts + rights
        unsort = [0] * n
        for i, b in enumerate(order):
            unsort[b] = i
        out.left.append(tensor(lefts))
        out.right.append(tensor(rights))
        out.unsort.append(tensor(unsort))
        out.left_goal_at.append(tensor([op_at(b, parent[b][t]) for b in lefts] if t else []))
        out.right_goal_at.append(tensor([op_at(b, parent[b][t]) for b in rights]))
        out.sibling_at.append(tensor([sub_offset[left_step[b][t]] + b for b in rights]))
        out.ops.append(tensor(sorted(op_pos[t])))
        depth = max((len(chains[b][t]) for b in range(n)), default=0)
        rows_k, label_k, left_k = [], [], []
        for k in range(depth):
            rows = [b for b in range(n) if len(chains[b][t]) > k]
            rows_k.append(tensor(rows))
            label_k.append(tensor([op_at(b, chains[b][t][k][0]) for b in rows]))
            left_k.append(tensor([sub_offset[chains[b][t][k][1]] + b for b in rows]))
        out.merge_rows.append(rows_k)
        out.merge_label_at.append(label_k)
        out.merge_left_at.append(left_k)
        out.n_left.append(len(lefts))
        out.n_right.append(len(rights))
    token_at = tensor([b * length + t for t in range(length) for b in range(active[t])])
    whole = torch.tensor(flat, dtype=torch.long).to(device, non_blocking=True)
    pieces = [whole[a:b] for a, b in spans]
    for name in ("left", "right", "unsort", "left_goal_at", "right_goal_at", "sibling_at", "ops"):
        setattr(out, name, [pieces[i] for i in getattr(out, name)])
    for name in ("merge_rows", "merge_label_at", "merge_left_at"):
        setattr(out, name, [[pieces[i] for i in per_k] for per_k in getattr(out, name)])
    out.token_at = pieces[token_at]
    return out


def state_dtype(like: torch.Tensor) -> torch.dtype:
    """The dtype the decoder carries its goals, subtree embeddings and encoder states in: autocast's
    when autocast is on for ``like``'s device (its linear layers then return that dtype, and every
    tensor they meet, in a cat, an index_copy or a beam stack, must match), else ``like``'s own.
    Logits and log-probabilities are float32 either way."""
    if torch.is_autocast_enabled(like.device.type):
        return torch.get_autocast_dtype(like.device.type)
    return like.dtype


def _as(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x`` in ``dtype``, dispatching nothing when it already is (``x.to`` would be an operation)."""
    return x if x.dtype == dtype else x.to(dtype)


def _float32(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32 when it is in a 16-bit float type (autocast's), else as it is."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _gated(x: torch.Tensor) -> torch.Tensor:
    value, gate = x.chunk(2, dim=-1)
    return torch.tanh(value) * torch.sigmoid(gate)


_STEP_LAYERS = ("goal_left", "goal_right", "attn_goal", "score_leaf", "ops", "generate", "merge")


class GTSDecoder(nn.Module):
    def __init__(self, hidden_size: int, embedding_size: int, n_ops: int, n_constants: int, dropout: float):
        super().__init__()
        H, E = hidden_size, embedding_size
        self.n_ops, self.n_constants = n_ops, n_constants
        self.dropout = Dropout(dropout)
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
        dtype = state_dtype(enc)
        enc, problem = _as(enc, dtype), _as(problem, dtype)
        qty_states = enc.gather(1, qty_positions[:, :, None].expand(-1, -1, H))  # (B, Q, H)
        constants = _as(self.constants, dtype)[None].expand(B, -1, -1)  # (B, C, H)
        num_emb = torch.cat([constants, qty_states], dim=1)  # (B, C+Q, H)
        num_mask = torch.cat([torch.ones(B, self.n_constants, dtype=torch.bool, device=enc.device), qty_mask], 1)
        return DecoderContext(enc, self.attn_enc(enc), text_mask, num_emb,
                              self.score_num(self.dropout(num_emb)), num_mask, problem)

    def step_layers(self) -> DeferredLinears:
        """The linear layers every decoding step applies, for one teacher-forced pass: their weight
        gradients are computed once over all steps (solvers/step_autograd.py)."""
        return DeferredLinears({name: getattr(self, name) for name in _STEP_LAYERS})

    def _layer(self, layers: DeferredLinears | None, name: str):
        return getattr(self, name) if layers is None else layers[name]

    def left_goal(self, parent_goal: torch.Tensor, layers: DeferredLinears | None = None) -> torch.Tensor:
        return _gated(self._layer(layers, "goal_left")(self.dropout(parent_goal)))

    def right_goal(self, left_subtree: torch.Tensor, parent_goal: torch.Tensor,
                   layers: DeferredLinears | None = None) -> torch.Tensor:
        return _gated(self._layer(layers, "goal_right")(self.dropout(torch.cat([left_subtree, parent_goal], -1))))

    def scores(self, ctx: DecoderContext, goal: torch.Tensor,
               layers: DeferredLinears | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits over [operators | constants | the batch's quantity slots] (R, n_ops+C+Q) and the
        attention context (R, H) of goals (R, H)."""
        q = self.dropout(goal)
        energy = self.attn_v(torch.tanh(self._layer(layers, "attn_goal")(q)[:, None] + ctx.enc_proj)).squeeze(-1)
        # masked and normalized in float32: NEG does not fit in float16, and the weights sum to 1
        weights = _float32(energy).masked_fill(~ctx.text_mask, NEG).softmax(-1)
        context = torch.bmm(weights[:, None], ctx.enc).squeeze(1)  # (R, H); autocast casts the weights
        leaf = self.dropout(torch.cat([goal, context], -1))  # (R, 2H)
        score_leaf = self._layer(layers, "score_leaf")
        num = self.score_v(torch.tanh(score_leaf(leaf)[:, None] + ctx.num_proj)).squeeze(-1)  # (R, C+Q)
        num = _float32(num).masked_fill(~ctx.num_mask, NEG)
        return torch.cat([_float32(self._layer(layers, "ops")(leaf)), num], -1), context  # logits in float32

    def child_goals(self, goal: torch.Tensor, context: torch.Tensor, op_ids: torch.Tensor,
                    layers: DeferredLinears | None = None):
        """Left and right child goals (R, H) of operator nodes, and the operator embeddings (R, E)."""
        label = _as(self.op_embedding(op_ids.clamp(0, self.n_ops - 1)), goal.dtype)
        generate = self._layer(layers, "generate")
        out = generate(torch.cat([self.dropout(goal), self.dropout(context), self.dropout(label)], -1))
        left, right = out.chunk(2, dim=-1)
        return _gated(left), _gated(right), label

    def merge_subtrees(self, label: torch.Tensor, left: torch.Tensor, right: torch.Tensor,
                       layers: DeferredLinears | None = None) -> torch.Tensor:
        return _gated(self._layer(layers, "merge")(self.dropout(torch.cat([label, left, right], -1))))

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
        sorted_targets = [target[b, :n].tolist() for b, n in enumerate(sorted_lengths)]
        plan = step_rows(sorted_targets, self.n_ops, L, active, target.device)
        # outputs of the steps so far, concatenated as they come (see StepRows): one two-input cat a
        # step each, rather than re-concatenating every earlier step's output whenever one is read
        op_left = op_right = op_label = subtrees = None
        logps = []  # per step (n_t,), scattered into (B, L) once at the end
        layers = self.step_layers()
        prefixes = ctx.prefixes(active)
        targets_t = target.t()  # (L, B): step t's tokens are a row, not a strided column
        for t in range(L):
            n = active[t]
            rows = prefixes[n]
            if t == 0:
                goal = self.left_goal(rows.problem, layers)
            else:
                parts = []
                if plan.n_left[t]:
                    parts.append(self.left_goal(op_left.index_select(0, plan.left_goal_at[t]), layers))
                if plan.n_right[t]:
                    parts.append(self.right_goal(subtrees.index_select(0, plan.sibling_at[t]),
                                                 op_right.index_select(0, plan.right_goal_at[t]), layers))
                goal = parts[0] if len(parts) == 1 else torch.cat(parts).index_select(0, plan.unsort[t])  # (n, H)
            logits, context = self.scores(rows, goal, layers)
            tok = targets_t[t, :n]
            if choose_at[t]:
                tok = self.best_equal_slot(logits, tok, qty_class[:n])
            logps.append(logits.log_softmax(-1).gather(1, tok[:, None]))  # (n, 1)
            ops = plan.ops[t]
            if ops.numel():
                left, right, label = self.child_goals(goal.index_select(0, ops), context.index_select(0, ops),
                                                      tok.index_select(0, ops), layers)
                op_left, op_right, op_label = (x if acc is None else torch.cat([acc, x])
                                               for acc, x in ((op_left, left), (op_right, right), (op_label, label)))
            subtree = self.leaf_embedding(rows, tok)  # (n, H); operator rows hold a placeholder never read
            for k, merging in enumerate(plan.merge_rows[t]):
                merged = self.merge_subtrees(op_label.index_select(0, plan.merge_label_at[t][k]),
                                             subtrees.index_select(0, plan.merge_left_at[t][k]),
                                             subtree.index_select(0, merging), layers)
                subtree = subtree.index_copy(0, merging, merged)
            subtrees = subtree if subtrees is None else torch.cat([subtrees, subtree])
        logp = torch.cat(logps).squeeze(1)  # (N,) every decoded token, step after step
        flat = logp.new_zeros(B * L).index_put((plan.token_at,), logp)
        return torch.zeros_like(flat).view(B, L).index_copy(0, order, flat.view(B, L))  # (B, L), in input order


def tree_loss(decoder: GTSDecoder, ctx: DecoderContext, batch, any_equal_slot: bool) -> torch.Tensor:
    """Mean negative log-likelihood per target token of a :class:`solvers.vocab.Batch` (the public
    code's masked cross-entropy); ``any_equal_slot`` lets a repeated value come from any of its slots."""
    qty_class = batch.qty_class if any_equal_slot and batch.has_repeated_values else None
    logp = decoder.token_log_probs(ctx, batch.target, batch.target_mask, qty_class)
    return -logp.sum() / batch.target_mask.sum()
