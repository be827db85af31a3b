"""Teacher forcing by waves of the tree in shapes fixed by a small key: the wave pass for CUDA graphs.

The wave pass (solvers/gts_waves.py) runs a decoder step a tree level instead of a prefix position, but the
rows of each step, how many merges run between steps and how many steps there are follow the batch's trees,
so its kernels differ from batch to batch and a CUDA graph cannot replay it. The shape-fixed pass a graphed
step captured so far (solvers/gts_dense.py) walks the prefix positions with all B rows at every step and K
merge levels after each: on the H200 its replay ran 4,821 kernels a MAWPS batch (docs/solvers.md), where
issue #32 asks for 1,500. This pass walks waves with every shape fixed by (B, L, W, R, H0, M0, A) alone:

- wave 0 is the B roots; waves 1 .. W-1 have R rows each (the wave's nodes, padded), on which both goal
  kinds are computed and the node's own is selected (a right child's from its left sibling's subtree and
  its parent's right child goal, a left child's from its parent's left child goal);
- every subtree whose tokens are known in advance is merged before the waves, in H0 levels of M0 rows;
- with the repeated-value rule (``waits`` given: some leaf of the batch takes its slot by the model's
  scores), each wave chooses the slots of its waiting leaves and is followed by one merge level of A rows:
  a merge that waits for a chosen leaf runs after the wave that chose it, and a merge above it one wave
  later, each reader's wave put after what it reads (:func:`padded_wave_plan`). One level a wave, rather than
  as many levels as the longest waiting chain after each wave, keeps the key small and adds merges only
  where the rule needs them.

The plan's indices are tensors made on the host (:class:`PaddedWavePlan`), so nothing in the pass reads a
device tensor back, and what the pass and autograd decide in Python depends on the shapes alone. Padding
rows read row 0 of whatever they index and their log-probabilities are multiplied by 0.

The same log-probabilities and gradients as the other passes (tests/solvers/test_gts_wave_graph.py, float64).
Dropout: one mask a site for the pass (:class:`solvers.gts_teacher.PassDropout`), node rows in padded wave
order for the goals' sites and the scores', merge rows in merge order for the merges'.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from solvers.device_copy import to_device
from solvers.fusion import fusing, pointwise
from solvers.gts_decoder import DecoderContext, GTSDecoder, _float32, state_dtype
from solvers.gts_teacher import PassDropout, repeated_value_leaves
from solvers.gts_waves import _trees_waves
from solvers.step_autograd import PlainStore, StepStore

PRE = -1  # a subtree known before the waves (no leaf of it waits for its goal)


@dataclass
class PaddedWavePlan:
    """Index tensors of a padded wave pass; N = B + (W - 1) * R node rows (wave 0: problem b's root at row b).

    Subtree rows (one store): F = B * (L // 2 + 1) leaves known in advance, then H0 levels of M0 merges, then
    with the rule, per wave its rows' chosen leaves (B or R) and one level of A merges."""

    node_at: torch.Tensor  # (N,) flat target index b * L + t of each node row (padding: 0)
    node_valid: torch.Tensor  # (N,) float, 1 on real nodes, 0 on padding rows
    node_problem: torch.Tensor  # (N,) problem of each node row (padding: 0)
    parent_row: torch.Tensor  # (W - 1, R) node row of each row's parent (its child goals' row)
    is_right: torch.Tensor  # (W - 1, R) bool, the node is a right child
    sibling_row: torch.Tensor  # (W - 1, R) subtree row of a right child's left sibling
    leaf_numbers: torch.Tensor  # (F,) number row b * (C+Q) + slot of each leaf known in advance
    pre_merges: torch.Tensor  # (H0, 3, M0) per level: operator node row, left and right child subtree rows
    waits: torch.Tensor  # (N,) bool, the leaf takes its slot by the model's scores; (0,) without the rule
    after_merges: torch.Tensor  # (W, 3, A) the merge level after each wave; (0, 3, 0) without the rule

    @property
    def waves(self) -> int:
        return self.is_right.shape[0] + 1

    @property
    def rule(self) -> bool:
        return self.waits.numel() > 0

    def key(self) -> tuple[int, ...]:
        """What the pass's kernels depend on besides the batch's (B, T, L, Q): (W, R, H0, M0, A, rule)."""
        return (self.waves, self.is_right.shape[1], *self.pre_merges.shape[::2], self.after_merges.shape[2],
                int(self.rule))

    def to(self, device: torch.device | str) -> "PaddedWavePlan":
        return PaddedWavePlan(*(to_device(getattr(self, f.name), device) for f in fields(self)))


def round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def round_up_geometric(n: int, m: int) -> int:
    """The smallest m * 2^k (k >= 0) that is at least n."""
    out = m
    while out < n:
        out *= 2
    return out


def padded_wave_plan(targets: list[list[int]], n_ops: int, length: int, n_numbers: int,
                     waits: list[list[bool]] | None = None, row_multiple: int | None = None,
                     merge_multiple: int = 16, wave_multiple: int = 1, level_multiple: int = 1,
                     geometric_rows: bool = False) -> PaddedWavePlan:
    """The :class:`PaddedWavePlan` of B prefix sequences (ids < n_ops are operators; leaves' ids - n_ops index the
    (C+Q) numbers; an empty one pads), padded to ``length`` positions, on the host. ``waits[b][t]``: the leaf's
    slot is chosen by the model (the repeated-value rule); without any, the plan has no rule. Rows R of the waves
    after the first and M0 of the merge levels before them are rounded up to ``row_multiple`` (default B; with
    ``geometric_rows`` to ``row_multiple`` times a power of two), the rows A of the merge level after each wave
    to ``merge_multiple``, the waves W and the levels H0 before them to ``wave_multiple`` and
    ``level_multiple`` (the added ones all padding)."""
    B = len(targets)
    row_multiple = row_multiple or B
    rows_up = round_up_geometric if geometric_rows else round_up
    rule = bool(waits) and any(any(w[:len(ids)]) for w, ids in zip(waits, targets))
    parent, is_right, per_tree = _trees_waves(targets, n_ops, length, waits if rule else None, one_level_a_wave=True)
    W = round_up(1 + max((max(s[0], default=0) for s in per_tree), default=0), wave_multiple)
    by_wave: list[list[tuple[int, int]]] = [[] for _ in range(W)]
    for b, ids in enumerate(targets):
        for t in range(1, len(ids)):
            by_wave[per_tree[b][0][t]].append((b, t))
    R = rows_up(max((len(nodes) for nodes in by_wave[1:]), default=1), row_multiple)
    N = B + (W - 1) * R
    node_row = {(b, 0): b for b, ids in enumerate(targets) if ids}
    for w in range(1, W):
        for i, node in enumerate(by_wave[w]):
            node_row[node] = B + (w - 1) * R + i
    node_at, node_problem, node_valid, node_waits = [0] * N, [0] * N, [0.0] * N, [False] * N
    for (b, t), row in node_row.items():
        node_at[row], node_problem[row], node_valid[row] = b * length + t, b, 1.0
        node_waits[row] = rule and waits[b][t]

    # subtree rows: the leaves known in advance, the merges before the waves, then per wave its chosen leaves and
    # its merge level
    F = B * (length // 2 + 1)
    sub_row: dict[tuple[int, int], int] = {}
    fixed = [(b, t) for b, ids in enumerate(targets) for t in range(len(ids))
             if ids[t] >= n_ops and per_tree[b][1][t] == PRE and per_tree[b][4][t]]
    for i, node in enumerate(fixed):
        sub_row[node] = i
    leaf_numbers = [0] * F
    for i, (b, t) in enumerate(fixed):
        leaf_numbers[i] = b * n_numbers + min(targets[b][t] - n_ops, n_numbers - 1)
    pre_levels: list[list[tuple[int, int]]] = []
    after: list[list[tuple[int, int]]] = [[] for _ in range(W)]
    for b, ids in enumerate(targets):
        _, ready, level, _, read = per_tree[b]
        for t in range(len(ids)):
            if ids[t] < n_ops and read[t]:
                if ready[t] == PRE:
                    pre_levels += [[] for _ in range(level[t] - len(pre_levels))]
                    pre_levels[level[t] - 1].append((b, t))
                else:
                    after[ready[t]].append((b, t))
    pre_levels += [[] for _ in range(round_up(len(pre_levels), level_multiple) - len(pre_levels))]
    H0 = len(pre_levels)
    M0 = rows_up(max((len(m) for m in pre_levels), default=1), row_multiple)
    for h, merges in enumerate(pre_levels):
        for i, node in enumerate(merges):
            sub_row[node] = F + h * M0 + i
    A = round_up(max((len(m) for m in after), default=1), merge_multiple) if rule else 0
    if rule:  # wave w's chosen leaves (a row each of its node rows) and its merge level, after the merges before
        first = [F + H0 * M0 + w * (R + A) - (R - B if w else 0) for w in range(W)]  # its first subtree row
        for (b, t), row in node_row.items():
            if node_waits[row]:
                w = per_tree[b][0][t]
                sub_row[b, t] = first[w] + row - (B + (w - 1) * R if w else 0)
        for w, merges in enumerate(after):
            for i, node in enumerate(merges):
                sub_row[node] = first[w] + (R if w else B) + i

    def merge_rows(merges: list[tuple[int, int]], width: int) -> list[list[int]]:
        rows = [[0] * width for _ in range(3)]
        for i, (b, t) in enumerate(merges):
            rows[0][i], rows[1][i] = node_row[b, t], sub_row[b, t + 1]
            rows[2][i] = sub_row[b, per_tree[b][3][t]]
        return rows

    parent_rows = [[0] * R for _ in range(W - 1)]
    right_rows = [[False] * R for _ in range(W - 1)]
    sibling_rows = [[0] * R for _ in range(W - 1)]
    for w in range(1, W):
        for i, (b, t) in enumerate(by_wave[w]):
            p = parent[b][t]
            parent_rows[w - 1][i] = node_row[b, p]
            if is_right[b][t]:
                right_rows[w - 1][i], sibling_rows[w - 1][i] = True, sub_row[b, p + 1]

    def long(x, shape=None):
        out = torch.tensor(x, dtype=torch.long)
        return out if shape is None else out.view(shape)

    return PaddedWavePlan(
        long(node_at), torch.tensor(node_valid), long(node_problem), long(parent_rows, (W - 1, R)),
        torch.tensor(right_rows, dtype=torch.bool).view(W - 1, R), long(sibling_rows, (W - 1, R)), long(leaf_numbers),
        long([merge_rows(m, M0) for m in pre_levels], (H0, 3, M0)),
        torch.tensor(node_waits if rule else [], dtype=torch.bool),
        long([merge_rows(m, A) for m in after] if rule else [], (W if rule else 0, 3, A)))


def plan_of_batch_targets(dec: GTSDecoder, target: torch.Tensor, target_mask: torch.Tensor,
                          qty_class: torch.Tensor | None, n_numbers: int, length: int | None = None,
                          rows: int | None = None, **rounding: int) -> PaddedWavePlan:
    """The :class:`PaddedWavePlan` of a batch's (B, L) targets, read back to the host (a device read: call it
    before a captured pass, not inside), optionally padded to ``length`` positions and ``rows`` rows; with
    ``qty_class`` the repeated-value rule's waiting leaves; ``rounding``: :func:`padded_wave_plan`'s multiples."""
    lengths = target_mask.sum(1).tolist()
    targets = [ids[:n] for ids, n in zip(target.tolist(), lengths)]
    waits = None
    if qty_class is not None:
        waits = repeated_value_leaves(dec, target, target_mask, qty_class)[0].tolist()
    extra = (rows or len(targets)) - len(targets)
    return padded_wave_plan(targets + [[]] * extra, dec.n_ops, target.shape[1] if length is None else length,
                            n_numbers, None if waits is None else waits + [[]] * extra, **rounding)


@pointwise
def _chosen_slots(leaf_proj: torch.Tensor, num_proj: torch.Tensor, rows: torch.Tensor, v: torch.Tensor,
                  not_from: torch.Tensor, waits: torch.Tensor, tok: torch.Tensor, n_ops: int,
                  n_constants: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The repeated-value rule's choice for a wave's rows, as :func:`padded_wave_log_probs` makes it unfused (no
    gradient): each waiting leaf's token becomes the quantity slot its goal scores highest among those ``not_from``
    leaves free (``leaf_proj`` (n, H) the scoring layer's goal half, ``num_proj`` (B, C+Q, H) its number half,
    ``rows`` (n,) each row's problem, ``v`` (H,) the score vector; scores a sum over H, so TorchInductor fuses them
    with the tanh before them), and the number row (problem * (C+Q) + slot) of each row's leaf embedding."""
    qty_proj = num_proj[rows, n_constants:]  # (n, Q, H)
    scores = _float32((torch.tanh(leaf_proj[:, None] + qty_proj) * v).sum(-1))
    best = scores.masked_fill(not_from, float("-inf")).argmax(1) + n_ops + n_constants
    tok = torch.where(waits, best, tok)
    n_numbers = num_proj.shape[1]
    return tok, rows * n_numbers + (tok - n_ops).clamp(0, n_numbers - 1)


def padded_wave_log_probs(dec: GTSDecoder, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                          qty_class: torch.Tensor | None = None, plan: PaddedWavePlan | None = None,
                          plain: bool = False) -> torch.Tensor:
    """(B, L) log-probability of each target token given the gold prefix (0 at padding), as
    :func:`solvers.gts_teacher.teacher_forced_log_probs` computes it (``qty_class``: the repeated-value rule),
    a wave of the trees at a time in shapes fixed by the plan's key. ``plan`` (on ``target``'s device) is built
    from the targets when not given, which reads them back to the host: give it to keep the pass free of host
    reads. A plan without the rule's waiting leaves scores the given slots (the rule then changes nothing).

    ``plain``: plain autograd throughout (the decoder's own layers, :class:`PlainStore`), the form ``torch.compile``
    can trace whole (bench/pass_compile.py; run it outside a ``fusion("inductor")`` block, whose fused functions
    the attention would call); eager it dispatches more than the default."""
    B, L = target.shape
    device = target.device
    n_numbers = ctx.num_emb.shape[1]
    if plan is None:
        plan = plan_of_batch_targets(dec, target, target_mask, qty_class, n_numbers).to(device)
    W, R = plan.waves, plan.is_right.shape[1]
    N = plan.node_at.shape[0]
    first_quantity = dec.n_ops + dec.n_constants
    flat_target = target.reshape(-1)
    tokens = flat_target[plan.node_at]  # (N,)
    not_from = None
    if plan.rule:
        assert qty_class is not None, "a plan with waiting leaves needs the batch's value classes"
        _, not_from = repeated_value_leaves(dec, target, target_mask, qty_class.to(device))
        not_from = not_from.view(B * L, -1)[plan.node_at]  # (N, Q)
    dtype = state_dtype(ctx.enc)
    p = dec.dropout.p if dec.training else 0.0
    drop = PassDropout(p, N, device, dtype)
    (H0, _, M0), (n_after, _, A) = plan.pre_merges.shape, plan.after_merges.shape
    merge_rows = H0 * M0 + n_after * A
    merge_drop = PassDropout(p, max(merge_rows, 1), device, dtype)
    layers = None if plain else dec.step_layers()
    Store = PlainStore if plain else StepStore
    labels = dec.op_labels(tokens, dtype)  # (N, E): every node's operator embedding (leaves' unused)
    op_label = Store.of(labels)
    op_left, op_right = Store(N), Store(N)
    numbers = Store.of(ctx.num_emb.reshape(B * n_numbers, -1))  # leaves' embeddings: rows b * (C+Q) + slot
    n_subtrees = plan.leaf_numbers.shape[0] + merge_rows + (N if plan.rule else 0)
    subtrees = Store(n_subtrees)
    subtrees.append(numbers.read(plan.leaf_numbers))

    def merge(level: torch.Tensor) -> None:  # (3, M): operator rows, left and right subtree rows
        subtrees.append(dec.merge_subtrees(op_label.read(level[0]), subtrees.read(level[1]),
                                           subtrees.read(level[2]), layers, merge_drop))

    for level in plan.pre_merges:
        merge(level)
    enc, enc_proj = Store.of(ctx.enc), Store.of(ctx.enc_proj)  # each wave reads its rows' problems' rows
    fused = fusing() and not plain
    if plan.rule:
        roots = torch.arange(B, device=device)  # the root wave's problems
        score_v = dec.score_v.weight.detach().view(-1)
    goal_contexts, chosen = [], []
    for w in range(W):
        start, n = (0, B) if w == 0 else (B + (w - 1) * R, R)

        def at(site, x, start=start):
            return drop.at(site, start, x)

        if w == 0:  # the roots: from the problems' vectors
            goal = dec.left_goal(ctx.problem, layers, at)
            context = dec.attend(ctx, goal, layers, at)
            problem = None
        else:
            parent = plan.parent_row[w - 1]
            from_left = dec.left_goal(op_left.read(parent), layers, at)
            from_right = dec.right_goal(subtrees.read(plan.sibling_row[w - 1]), op_right.read(parent), layers, at)
            goal = torch.where(plan.is_right[w - 1][:, None], from_right, from_left)  # (R, H)
            problem = plan.node_problem[start: start + n]
            context = dec.attend_over(enc.read(problem), enc_proj.read(problem), ctx.text_bias.index_select(0, problem),
                                      goal, layers, at)
        goal_context = torch.cat([goal, context], -1)  # (n, 2H)
        tok = tokens[start: start + n]
        if plan.rule:  # a repeated value's leaf takes the slot the model scores highest here
            rows = roots if problem is None else problem
            if fused:  # the scores, their mask, the choice and its number row in a few generated kernels
                with torch.no_grad():
                    leaf_proj = dec.score_leaf(at("leaf", goal_context))
                    tok, number_rows = _chosen_slots(leaf_proj, ctx.num_proj, rows, score_v,
                                                     not_from[start: start + n], plan.waits[start: start + n], tok,
                                                     dec.n_ops, dec.n_constants, fused=True)
            else:
                qty_proj = ctx.num_proj if problem is None else ctx.num_proj.index_select(0, problem)
                with torch.no_grad():
                    scores = dec.quantity_scores(qty_proj[:, dec.n_constants:], goal_context, at)
                best = scores.masked_fill_(not_from[start: start + n], float("-inf")).argmax(1) + first_quantity
                tok = torch.where(plan.waits[start: start + n], best, tok)
                number_rows = rows * n_numbers + (tok - dec.n_ops).clamp(0, n_numbers - 1)
            subtrees.append(numbers.read(number_rows))
        goal_contexts.append(goal_context)
        chosen.append(tok)
        left, right = dec.child_goals_with(goal_context, labels[start: start + n], layers, at)
        op_left.append(left)
        op_right.append(right)
        if plan.after_merges.shape[2]:
            merge(plan.after_merges[w])
    # every node row's scores at once
    logits = dec.logits_of(ctx.num_proj.index_select(0, plan.node_problem),
                           ctx.num_mask.index_select(0, plan.node_problem), torch.cat(goal_contexts), layers,
                           lambda site, x: drop.at(site, 0, x))
    logp = logits.log_softmax(-1).gather(1, torch.cat(chosen)[:, None]).squeeze(1)  # (N,)
    logp = logp * plan.node_valid.to(logp.dtype)
    return logp.new_zeros(B * L).index_add(0, plan.node_at, logp).view(B, L)
