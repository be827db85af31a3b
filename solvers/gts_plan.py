"""Index plans for teacher-forced decoding of prefix trees (the GTS decoder, solvers/gts_teacher.py).

The target prefix is known, so per example and position the parent, whether the node is a right
child, the step at which its left sibling's subtree was completed, and the chain of merges a leaf
triggers can be computed before decoding: a batched step then gathers earlier steps' outputs by
index instead of walking per-example stacks.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from solvers.device_copy import to_device


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


class IndexPool:
    """Index lists gathered on the host and copied to the device as one tensor (one copy, no device sync
    in the pass that reads them), handed back as slices of it."""

    def __init__(self) -> None:
        self.flat: list[int] = []
        self.spans: list[tuple[int, int]] = []

    def add(self, values: list[int]) -> int:
        """Adds a list; returns its number, its place in :meth:`tensors`."""
        self.spans.append((len(self.flat), len(self.flat) + len(values)))
        self.flat.extend(values)
        return len(self.spans) - 1

    def tensors(self, device: torch.device | str) -> list[torch.Tensor]:
        """Every list added, in order, as a slice of one long tensor on ``device`` (empty lists share one
        empty slice)."""
        whole = to_device(torch.tensor(self.flat, dtype=torch.long), device)
        nothing = whole[:0]
        return [whole[a:b] if b > a else nothing for a, b in self.spans]


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

    left: list[list[int]]  # per step: rows that are left children (or the root)
    right: list[list[int]]  # per step: rows that are right children
    unsort: list[torch.Tensor]  # per step: permutation of [left; right] back to row order
    left_goal_at: list[torch.Tensor]  # per step, left rows: flat index of the parent's left goal
    right_goal_at: list[torch.Tensor]  # per step, right rows: flat index of the parent's right goal
    sibling_at: list[torch.Tensor]  # per step, right rows: flat subtree index of the left sibling
    ops: list[torch.Tensor]  # per step: rows whose token is an operator
    merge_rows: list[list[torch.Tensor]]  # per step, per merge level: rows merging
    merge_label_at: list[list[torch.Tensor]]  # ... flat index of the merged operator's embedding
    merge_left_at: list[list[torch.Tensor]]  # ... flat subtree index of its left child
    merge_self_at: list[list[torch.Tensor]]  # ... flat subtree index of the merging row itself
    n_left: list[int]  # per step: len(left), known without reading a tensor
    n_right: list[int]  # per step: len(right)
    token_at: torch.Tensor  # (N,) flat index b * L + t of every decoded token, step after step
    token_row: torch.Tensor  # (N,) row b of every decoded token, step after step
    n_op_rows: int  # operator rows of all steps (rows of the operator outputs' concatenation)
    op_token_at: torch.Tensor | None = None  # (n_op_rows,) flat index b * L + t of every operator token, step after step
    op_rows_at: list[torch.Tensor] | None = None  # per step: its operator rows' indices among all steps' (a range)


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

    pool = IndexPool()  # every index list, one after the other; each becomes a slice of one tensor
    tensor = pool.add

    def op_at(b: int, p: int) -> int:
        return op_offset[p] + op_pos[p][b]

    out = StepRows(*([] for _ in range(13)), token_at=None, token_row=None, n_op_rows=n_op_total)  # type: ignore[arg-type]
    for t in range(length):
        n = active[t]
        lefts = [b for b in range(n) if not is_right[b][t]]
        rights = [b for b in range(n) if is_right[b][t]]
        order = lefts + rights
        unsort = [0] * n
        for i, b in enumerate(order):
            unsort[b] = i
        out.left.append(lefts)
        out.right.append(rights)
        out.unsort.append(tensor(unsort if lefts and rights else []))  # read only where both kinds occur
        out.left_goal_at.append(tensor([op_at(b, parent[b][t]) for b in lefts] if t else []))
        out.right_goal_at.append(tensor([op_at(b, parent[b][t]) for b in rights]))
        out.sibling_at.append(tensor([sub_offset[left_step[b][t]] + b for b in rights]))
        out.ops.append(tensor(sorted(op_pos[t])))
        depth = max((len(chains[b][t]) for b in range(n)), default=0)
        rows_k, label_k, left_k, self_k = [], [], [], []
        for k in range(depth):
            rows = [b for b in range(n) if len(chains[b][t]) > k]
            rows_k.append(tensor(rows))
            label_k.append(tensor([op_at(b, chains[b][t][k][0]) for b in rows]))
            left_k.append(tensor([sub_offset[chains[b][t][k][1]] + b for b in rows]))
            self_k.append(tensor([sub_offset[t] + b for b in rows]))
        out.merge_rows.append(rows_k)
        out.merge_label_at.append(label_k)
        out.merge_left_at.append(left_k)
        out.merge_self_at.append(self_k)
        out.n_left.append(len(lefts))
        out.n_right.append(len(rights))
    op_token_at = tensor([b * length + t for t in range(length) for b in sorted(op_pos[t])])
    op_rows_at = [tensor(list(range(op_offset[t], op_offset[t] + len(op_pos[t])))) for t in range(length)]
    token_at = tensor([b * length + t for t in range(length) for b in range(active[t])])
    token_row = tensor([b for t in range(length) for b in range(active[t])])
    pieces = pool.tensors(device)
    for name in ("unsort", "left_goal_at", "right_goal_at", "sibling_at", "ops"):
        setattr(out, name, [pieces[i] for i in getattr(out, name)])
    for name in ("merge_rows", "merge_label_at", "merge_left_at", "merge_self_at"):
        setattr(out, name, [[pieces[i] for i in per_k] for per_k in getattr(out, name)])
    out.token_at, out.token_row = pieces[token_at], pieces[token_row]
    out.op_token_at, out.op_rows_at = pieces[op_token_at], [pieces[i] for i in op_rows_at]
    return out
