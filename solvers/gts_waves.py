"""Teacher-forced GTS decoding by waves of the tree instead of positions of the prefix.

The row-wise pass (solvers/gts_teacher.py) runs one decoder step a prefix position: L steps for a batch whose
longest target has L tokens, each step a few dozen operations (kernels on a GPU, launched one by one from
Python). But with the target known, a node's goal depends only on its parent's goal and, for a right child,
on its left sibling's finished subtree; and a subtree's embedding depends only on its tokens (its leaves'
quantity or constant embeddings merged bottom-up under its operators' embeddings), not on any goal. So:

- every subtree the teacher forcing needs is merged before any goal, one batched merge a tree height;
- the goals are computed in waves: wave 0 the roots, wave w+1 the children of wave w's operators, all of
  them together whatever their positions (a right child's left sibling is finished by then);

and the number of sequential steps is the trees' depth, not their length. The one exception is the
repeated-value rule (``qty_class``): a leaf whose value occurs at several slots takes the slot the model
scores highest at that node, so its embedding, and those of the subtrees above it, wait for its goal. The
plan (:func:`wave_plan`) puts such a node's right-hand relatives in later waves and merges those subtrees
after the wave that chose the leaf (bottom-up, a level at a time). Counted on the trainer's MAWPS batches
(80/20 split, batch 64): 537 positions an epoch against 214 waves; Math23K 3,669 against 1,691.

The same log-probabilities and gradients as the row-wise pass (tests/solvers/test_gts_waves.py, float64):
the same building blocks of solvers/gts_decoder.py on other groupings of rows. Dropout draws one mask a site
for the pass (:class:`solvers.gts_teacher.PassDropout`), rows in wave order: as the row-wise pass, every
element is kept independently; only which draw lands on which node differs.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from solvers.gts_decoder import DecoderContext, GTSDecoder, state_dtype
from solvers.gts_plan import IndexPool, _plan_lists
from solvers.gts_teacher import PassDropout, repeated_value_leaves
from solvers.step_autograd import StepStore


@dataclass
class Merges:
    """One level of merges: each merged operator's row among the operator rows (its embedding), and the
    subtree rows of its left and right child; the merged subtrees are appended to the subtree rows."""

    label_at: torch.Tensor
    left_at: torch.Tensor
    right_at: torch.Tensor


@dataclass
class Wave:
    """The nodes whose goals one wave computes: rows ``start .. start + n`` among all nodes, left children
    (and roots) first, then right children."""

    start: int
    n: int
    n_left: int
    left_goal_at: torch.Tensor  # left rows (wave > 0): operator row of the parent (its left child goal)
    right_goal_at: torch.Tensor  # right rows: operator row of the parent (its right child goal)
    sibling_at: torch.Tensor  # right rows: subtree row of the left sibling
    problem: torch.Tensor | None  # problem of each row; None: every problem's root, in order (wave 0)
    ops: torch.Tensor  # the wave's rows whose token is an operator
    op_rows: torch.Tensor  # their operator rows (a range: they are appended in this order)
    choose: torch.Tensor  # the wave's rows that are repeated-value leaves (the rule), in the wave's order
    choose_at: torch.Tensor  # their flat target index b * L + t
    choose_problem: torch.Tensor  # their problems
    merges: list[Merges]  # after the wave: subtrees waiting for the leaves it chose, bottom-up


@dataclass
class WavePlan:
    """What :func:`wave_log_probs` computes in which order: host-made index tensors, one copy to the device."""

    n_nodes: int
    node_at: torch.Tensor  # (N,) flat target index b * L + t of every node, wave after wave
    node_problem: torch.Tensor  # (N,) problem of every node, wave after wave
    op_token_at: torch.Tensor  # flat target index of every operator token, in operator-row order
    leaf_numbers: torch.Tensor  # number row b * (C+Q) + slot of every leaf known in advance: subtree rows 0..
    n_subtrees: int
    merges: list[Merges]  # before the waves: subtrees of leaves known in advance, bottom-up
    waves: list[Wave]


def _tree_waves(ids: list[int], n_ops: int, parent: list[int], is_right: list[bool], waits: list[bool],
                one_level_a_wave: bool = False):
    """One prefix tree's goal wave of each node, the wave after which each node's subtree exists (-1: before the
    waves), each operator's merge level among the operators whose subtrees come after the same wave, each
    operator's right child, and whether anything reads each node's subtree. ``one_level_a_wave`` (the padded pass
    of solvers/gts_wave_graph.py): a merge after a wave may not read another merge of that wave, so a merge above a
    merged subtree comes a wave later (the subtrees merged before the waves still take as many levels as needed)."""
    n = len(ids)
    right_child = {parent[t]: t for t in range(1, n) if is_right[t]}
    if unclosed := [t for t in range(n) if ids[t] < n_ops and t not in right_child]:
        raise ValueError(f"not a whole prefix tree: the operator at position {unclosed[0]} lacks a child")
    wave, ready = [0] * n, [None] * n

    def usable(c: int) -> int:  # the first wave after which a merge may read c's subtree
        if one_level_a_wave and ids[c] < n_ops and ready[c] != -1:
            return ready[c] + 1
        return ready[c]

    def subtree_ready(t: int) -> int:  # children before parents: iterative, no recursion limit to meet
        todo = [t]
        while todo:
            u = todo[-1]
            if ready[u] is not None:
                todo.pop()
            elif ids[u] >= n_ops:
                ready[u] = wave[u] if waits[u] else -1
                todo.pop()
            elif ready[u + 1] is None or ready[right_child[u]] is None:
                todo += [c for c in (u + 1, right_child[u]) if ready[c] is None]
            else:
                ready[u] = max(usable(u + 1), usable(right_child[u]))
                todo.pop()
        return ready[t]

    for t in range(1, n):  # prefix order: a parent and a left sibling's whole subtree come first
        p = parent[t]
        wave[t] = max(wave[p] + 1, subtree_ready(p + 1) + 1) if is_right[t] else wave[p] + 1
    if n:
        subtree_ready(0)
    # a subtree is read by its right sibling's goal (a left child's) or by its parent's merge, if that is read:
    # the root's is read by nothing, nor are those down the right spine below it (the row-wise pass merges them)
    read = [False] * n
    for t in range(1, n):
        read[t] = not is_right[t] or read[parent[t]]
    level = [0] * n
    for t in range(n - 1, -1, -1):  # children after their parent: bottom-up backwards
        if ids[t] < n_ops:
            level[t] = 1 + max((level[c] for c in (t + 1, right_child[t]) if ready[c] == ready[t]), default=0)
    return wave, ready, level, right_child, read


def _trees_waves(targets: list[list[int]], n_ops: int, length: int, waits: list[list[bool]] | None,
                 one_level_a_wave: bool = False):
    """The parents and right-child flags of B prefix sequences padded to ``length`` (:func:`_plan_lists`) and
    :func:`_tree_waves` of each tree (``waits``: its waiting leaves, None for none); a ValueError naming the
    batch's row whose target is not a whole tree."""
    parent, is_right, _, _ = _plan_lists(targets, n_ops, length)
    per_tree = []
    for b, ids in enumerate(targets):
        try:
            per_tree.append(_tree_waves(ids, n_ops, parent[b], is_right[b], waits[b] if waits else [False] * len(ids),
                                        one_level_a_wave))
        except ValueError as err:
            raise ValueError(f"target {b} of the batch ({ids}): {err}") from None
    return parent, is_right, per_tree


def wave_plan(targets: list[list[int]], n_ops: int, length: int, n_numbers: int,
              waits: list[list[bool]] | None = None, device: torch.device | str = "cpu") -> WavePlan:
    """The :class:`WavePlan` of B prefix sequences (ids < n_ops are operators; leaves' ids - n_ops index the
    (C+Q) numbers), padded to ``length``; ``waits[b][t]``: the leaf's embedding waits for its goal (the
    repeated-value rule)."""
    parent, is_right, per_tree = _trees_waves(targets, n_ops, length, waits)
    n_waves = 1 + max((max(w[0], default=-1) for w in per_tree), default=-1)
    # nodes by wave, left children and roots first, then right children (each by problem, then position)
    by_wave: list[list[tuple[int, int]]] = [[] for _ in range(n_waves)]
    for b, ids in enumerate(targets):
        for t in range(len(ids)):
            by_wave[per_tree[b][0][t]].append((b, t))
    for nodes in by_wave:
        nodes.sort(key=lambda bt: (is_right[bt[0]][bt[1]], bt))
    op_row: dict[tuple[int, int], int] = {}
    for nodes in by_wave:
        for b, t in nodes:
            if targets[b][t] < n_ops:
                op_row[b, t] = len(op_row)
    pool = IndexPool()
    sub_row: dict[tuple[int, int], int] = {}

    def subtree_rows(nodes):  # the next subtree rows, in order
        for node in nodes:
            sub_row[node] = len(sub_row)

    # the operators whose subtrees something reads, by the wave after which they are merged (-1: before the waves)
    # and, in each, by merge level (then problem and position)
    merging: dict[int, list[list[tuple[int, int]]]] = {}
    for b, ids in enumerate(targets):
        _, ready, level, _, read = per_tree[b]
        for t in range(len(ids)):
            if ids[t] < n_ops and read[t]:
                levels = merging.setdefault(ready[t], [])
                levels += [[] for _ in range(level[t] - len(levels))]
                levels[level[t] - 1].append((b, t))

    def merges_after(ready_at: int) -> list[tuple[int, int, int]]:  # per level bottom-up: label, left, right ids
        out = []
        for level in merging.get(ready_at, []):
            right = [per_tree[b][3][t] for b, t in level]
            out.append((pool.add([op_row[b, t] for b, t in level]), pool.add([sub_row[b, t + 1] for b, t in level]),
                        pool.add([sub_row[b, r] for (b, _), r in zip(level, right)])))
            subtree_rows(level)
        return out

    fixed = [(b, t) for b, ids in enumerate(targets) for t in range(len(ids))
             if ids[t] >= n_ops and per_tree[b][1][t] == -1 and per_tree[b][4][t]]
    leaf_numbers = pool.add([b * n_numbers + min(targets[b][t] - n_ops, n_numbers - 1) for b, t in fixed])
    subtree_rows(fixed)
    merges = merges_after(-1)
    waves, start = [], 0
    for w, nodes in enumerate(by_wave):
        lefts = [(b, t) for b, t in nodes if not is_right[b][t]]
        rights = [(b, t) for b, t in nodes if is_right[b][t]]
        ops = [i for i, (b, t) in enumerate(nodes) if targets[b][t] < n_ops]
        choose = [i for i, (b, t) in enumerate(nodes) if targets[b][t] >= n_ops and per_tree[b][1][t] == w]
        first_op = op_row[nodes[ops[0]]] if ops else 0
        all_roots = w == 0 and [b for b, _ in nodes] == list(range(len(targets)))
        wave = (start, len(nodes), len(lefts), pool.add([op_row[b, parent[b][t]] for b, t in lefts] if w else []),
                pool.add([op_row[b, parent[b][t]] for b, t in rights]),
                pool.add([sub_row[b, parent[b][t] + 1] for b, t in rights]),
                None if all_roots else pool.add([b for b, _ in nodes]), pool.add(ops),
                pool.add(list(range(first_op, first_op + len(ops)))), pool.add(choose),
                pool.add([nodes[i][0] * length + nodes[i][1] for i in choose]), pool.add([nodes[i][0] for i in choose]))
        subtree_rows([nodes[i] for i in choose])
        waves.append((wave, merges_after(w)))
        start += len(nodes)
    node_at = pool.add([b * length + t for nodes in by_wave for b, t in nodes])
    node_problem = pool.add([b for nodes in by_wave for b, _ in nodes])
    op_token_at = pool.add([b * length + t for (b, t) in sorted(op_row, key=op_row.get)])
    tensors = pool.tensors(device)

    def levels(specs):
        return [Merges(*(tensors[i] for i in spec)) for spec in specs]

    return WavePlan(start, tensors[node_at], tensors[node_problem], tensors[op_token_at], tensors[leaf_numbers],
                    len(sub_row), levels(merges),
                    [Wave(s, n, n_left, *(None if i is None else tensors[i] for i in ids), merges=levels(after))
                     for (s, n, n_left, *ids), after in waves])


def tree_wave_counts(dec: GTSDecoder, target: torch.Tensor, target_mask: torch.Tensor,
                     qty_class: torch.Tensor | None = None) -> list[int]:
    """How many waves :func:`wave_log_probs` would take for each row of a (B, L) batch of targets alone (on the
    host): 1 + its tree's last goal wave, the repeated-value rule's waiting leaves counted when ``qty_class`` is
    given. A batch takes its deepest row's count: the decoder's sequential steps that TrainConfig.bucketing
    "steps" sorts problems by."""
    lengths = target_mask.sum(1).tolist()
    targets = [ids[:n] for ids, n in zip(target.tolist(), lengths)]
    waits = None if qty_class is None else repeated_value_leaves(dec, target, target_mask, qty_class)[0].tolist()
    return [1 + max(tree[0], default=-1) for tree in _trees_waves(targets, dec.n_ops, target.shape[1], waits)[2]]


def decoder_steps(dec: GTSDecoder, any_equal_slot: bool, encoding, problems, chunk: int = 512) -> list[int]:
    """The sequential steps each problem's teacher-forced pass takes through the tree decoder ``dec`` (of GTS or
    bert-gts, trained with the repeated-value rule when ``any_equal_slot``), encoded by ``encoding``
    (solvers.vocab.Encoding): its tree's waves (:func:`tree_wave_counts`), or with teacher_pass "positions" its
    expression's length. What TrainConfig.bucketing "steps" sorts a pool of problems by."""
    out: list[int] = []
    for start in range(0, len(problems), chunk):
        batch = encoding.batch(problems[start: start + chunk])
        assert batch.target is not None and batch.target_mask is not None, "training problems have targets"
        if dec.teacher_pass == "positions":
            out += batch.target_mask.sum(1).tolist()
            continue
        qty_class = batch.qty_class if any_equal_slot and batch.has_repeated_values else None
        out += tree_wave_counts(dec, batch.target, batch.target_mask, qty_class)
    return out


def wave_log_probs(dec: GTSDecoder, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                   qty_class: torch.Tensor | None = None) -> torch.Tensor:
    """(B, L) log-probability of each target token given the gold prefix (0 at padding), as
    :func:`solvers.gts_teacher.teacher_forced_log_probs` computes it (``qty_class``: the repeated-value rule),
    one wave of the trees at a time."""
    B, L = target.shape
    device = target.device
    first_quantity = dec.n_ops + dec.n_constants
    n_numbers = ctx.num_emb.shape[1]
    waits = not_from = None
    if qty_class is not None:  # which leaves take their slot by the model's scores, and from which slots
        repeated, not_from = repeated_value_leaves(dec, target, target_mask, qty_class.to(device))
        not_from = not_from.view(B * L, -1)
        waits = repeated.tolist()
    lengths = target_mask.sum(1).tolist()
    targets = [ids[:n] for ids, n in zip(target.tolist(), lengths)]
    plan = wave_plan(targets, dec.n_ops, L, n_numbers, waits, device)
    dtype = state_dtype(ctx.enc)
    drop = PassDropout(dec.dropout.p if dec.training else 0.0, plan.n_nodes, device, dtype)
    layers = dec.step_layers()
    flat_target = target.reshape(-1)
    op_label = StepStore.of(dec.op_labels(flat_target[plan.op_token_at], dtype))
    op_left, op_right = StepStore(op_label.rows), StepStore(op_label.rows)
    numbers = StepStore.of(ctx.num_emb.reshape(B * n_numbers, -1))  # leaves' embeddings: rows b * (C+Q) + slot
    subtrees = StepStore(plan.n_subtrees)
    subtrees.append(numbers.read(plan.leaf_numbers))

    def merge(levels: list[Merges]) -> None:
        for m in levels:
            subtrees.append(dec.merge_subtrees(op_label.read(m.label_at), subtrees.read(m.left_at),
                                               subtrees.read(m.right_at), layers, drop))

    merge(plan.merges)
    enc, enc_proj = StepStore.of(ctx.enc), StepStore.of(ctx.enc_proj)  # each wave reads its nodes' problems' rows
    tokens = flat_target[plan.node_at]  # (N,)
    goal_contexts, chosen = [], []
    for wave in plan.waves:
        parts = []
        if wave.left_goal_at.numel():  # left children: from their parents' left child goals
            parts.append(dec.left_goal(op_left.read(wave.left_goal_at), layers, drop))
        elif wave.n_left:  # the roots (wave 0): from the problems' vectors
            roots = ctx.problem if wave.problem is None else ctx.problem.index_select(0, wave.problem)
            parts.append(dec.left_goal(roots, layers, drop))
        if wave.n > wave.n_left:
            sibling, parent = subtrees.read(wave.sibling_at), op_right.read(wave.right_goal_at)
            parts.append(dec.right_goal(sibling, parent, layers, drop))
        goal = parts[0] if len(parts) == 1 else torch.cat(parts)  # (n, H)
        if wave.problem is None:
            context = dec.attend(ctx, goal, layers, drop)
        else:
            context = dec.attend_over(enc.read(wave.problem), enc_proj.read(wave.problem),
                                      ctx.text_bias.index_select(0, wave.problem), goal, layers, drop)
        goal_context = torch.cat([goal, context], -1)  # (n, 2H)
        tok = tokens[wave.start: wave.start + wave.n]
        if wave.choose.numel():  # the rule: a repeated value's leaf takes the slot the model scores highest here
            with torch.no_grad():
                scores = dec.quantity_scores(ctx.num_proj.index_select(0, wave.choose_problem)[:, dec.n_constants:],
                                             goal_context[wave.choose],
                                             lambda site, x, rows=wave.choose + wave.start: drop.at_rows(site, rows, x))
            best = scores.masked_fill_(not_from[wave.choose_at], float("-inf")).argmax(1) + first_quantity
            tok = tok.index_copy(0, wave.choose, best)
            subtrees.append(numbers.read(wave.choose_problem * n_numbers + (best - dec.n_ops)))
        goal_contexts.append(goal_context)
        chosen.append(tok)
        if wave.ops.numel():
            left, right = dec.child_goals_with(goal_context[wave.ops], op_label.read(wave.op_rows), layers, drop)
            op_left.append(left)
            op_right.append(right)
        merge(wave.merges)
    # every node's scores at once, rows wave after wave
    logits = dec.logits_of(ctx.num_proj.index_select(0, plan.node_problem),
                           ctx.num_mask.index_select(0, plan.node_problem), torch.cat(goal_contexts), layers,
                           lambda site, x: drop.at(site, 0, x))
    logp = logits.log_softmax(-1).gather(1, torch.cat(chosen)[:, None]).squeeze(1)  # (N,)
    return logp.new_zeros(B * L).index_put((plan.node_at,), logp).view(B, L)
