"""Teacher-forced decoding of the GTS tree decoder (solvers/gts_decoder.py), batched across problems.

The target prefix is known, so :func:`solvers.gts_plan.step_rows` precomputes which rows each step
computes what for. Step ``t`` runs only the recurrent part on the problems still decoding: the goals
(left children from their parent's left goal, right children from their parent's right goal and
their left sibling's subtree), the attention context, the child goals of operator tokens and the
merges of finished subtrees, gathering earlier steps' outputs by index. What no later step reads,
the scores of the target tokens, is computed once after the loop over every step's goals and
contexts: a few large operations instead of a dozen small ones per step (the products are the same;
a row of a larger product can differ from the per-step one in the last bits). Dropout masks are drawn
once per pass and input site (:class:`PassDropout`), each step taking its next rows.
"""
from __future__ import annotations

import torch

from solvers.dropout import scaled_keep_mask
from solvers.gts_decoder import DecoderContext, GTSDecoder, state_dtype
from solvers.gts_plan import step_rows
from solvers.step_autograd import StepStore


class PassDropout:
    """The decoder's dropout for one teacher-forced pass: per input site (``left_goal``, ``attend``,
    ``generate``, ...) one mask of ``rows`` rows is drawn at its first use, and each call multiplies
    its input by the site's next rows (or, with :meth:`at`, the rows from a given offset). Every
    element is kept with probability 1 - p and scaled by the inverse, independently, as one
    ``nn.Dropout`` call per node would do; only the order of the random draws differs."""

    def __init__(self, p: float, rows: int, device: torch.device, dtype: torch.dtype):
        self.p, self.rows, self.device, self.dtype = p, rows, device, dtype
        self.masks: dict[str, torch.Tensor] = {}
        self.used: dict[str, int] = {}

    def _mask(self, site: str, width: int) -> torch.Tensor:
        mask = self.masks.get(site)
        if mask is None:
            mask = self.masks[site] = scaled_keep_mask((self.rows, width), self.p, self.device, self.dtype)
        return mask

    def at(self, site: str, start: int, x: torch.Tensor) -> torch.Tensor:
        if self.p == 0.0:
            return x
        mask = self._mask(site, x.shape[-1])
        if start + x.shape[0] > self.rows:
            raise ValueError(f"dropout site {site}: rows {start}..{start + x.shape[0]} beyond the pass's {self.rows}")
        return x * mask[start: start + x.shape[0]]

    def at_rows(self, site: str, index: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``x`` times the site's mask rows ``index`` (a long tensor, one row of x each; not range-checked:
        the caller's plan gives rows below ``rows``)."""
        return x if self.p == 0.0 else x * self._mask(site, x.shape[-1])[index]

    def __call__(self, site: str, x: torch.Tensor) -> torch.Tensor:
        start = self.used.get(site, 0)
        self.used[site] = start + x.shape[0]
        return self.at(site, start, x)


def repeated_value_leaves(dec: GTSDecoder, target: torch.Tensor, target_mask: torch.Tensor,
                          qty_class: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The repeated-value rule's masks of (B, L) targets, with ``qty_class`` (B, Q) on their device: ``repeated``
    (B, L), the target quantities whose value occurs at several slots of their problem, and ``not_from`` (B, L, Q),
    the slots each may not come from (all but those of its value class; every slot where it is not repeated)."""
    first_quantity = dec.n_ops + dec.n_constants
    slot = (target - first_quantity).clamp(0, qty_class.shape[1] - 1)  # (B, L)
    class_size = (qty_class[:, :, None] == qty_class[:, None, :]).sum(-1)  # (B, Q)
    repeated = (target >= first_quantity) & (class_size.gather(1, slot) > 1) & target_mask
    same = qty_class[:, None, :] == qty_class.gather(1, slot)[:, :, None]  # (B, L, Q)
    return repeated, ~(same & repeated[:, :, None])


def teacher_forced_log_probs(dec: GTSDecoder, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                             qty_class: torch.Tensor | None = None) -> torch.Tensor:
    """(B, L) log-probability of each target token given the gold prefix so far (0 at padding).

    With ``qty_class`` (B, Q) (:attr:`solvers.vocab.Batch.qty_class`), a target quantity whose
    value occurs at several positions of the text may come from any of them: each such leaf takes
    the equal-valued slot the model scores highest at that step, as its target and as the leaf
    embedding the tree goes on with (the public implementation's ``num_stack``). For training only;
    without it the given slots are scored as they are.

    Rows are sorted by target length (longest first) so that step t runs only on the first n_t rows
    still decoding: the work is proportional to the real number of target tokens."""
    B, L = target.shape
    lengths = target_mask.sum(1)
    order = torch.sort(lengths, descending=True, stable=True).indices
    target, ctx = target.index_select(0, order), ctx.select(order)
    choose_at = [False] * L  # steps where some row's target value occurs at several slots
    if qty_class is not None:
        repeated, not_from = repeated_value_leaves(dec, target, target_mask.index_select(0, order),
                                                   qty_class.to(target.device).index_select(0, order))
        choose_at = repeated.any(0).tolist()
        not_from = not_from.transpose(0, 1)  # (L, B, Q)
        choosing = repeated.t()  # (L, B)
    sorted_lengths = lengths.index_select(0, order).tolist()
    active = [sum(1 for n in sorted_lengths if n > t) for t in range(L)]  # rows decoding at step t
    sorted_targets = [ids[:n] for ids, n in zip(target.tolist(), sorted_lengths)]
    plan = step_rows(sorted_targets, dec.n_ops, L, active, target.device)
    drop = PassDropout(dec.dropout.p if dec.training else 0.0, sum(active), target.device, state_dtype(ctx.enc))
    # outputs of the steps so far, in stores that later steps gather from (solvers/step_autograd.py's
    # StepStore: one gradient buffer a store instead of a zero tensor a gather and a split a step)
    op_left, op_right = StepStore(plan.n_op_rows), StepStore(plan.n_op_rows)
    # every operator token is known in advance (the repeated-value rule changes leaves only): their
    # embeddings are looked up once, step after step
    op_label = StepStore.of(dec.op_labels(target.reshape(-1)[plan.op_token_at], state_dtype(ctx.enc)))
    subtrees = StepStore(sum(active))
    goal_contexts, tokens = [], []  # per step, (n_t, ...): scored once after the loop
    layers = dec.step_layers()
    prefixes = ctx.prefixes(active)
    # every decoded token (and below its leaf row) step after step: step t's are a slice
    tokens_in_order = target.reshape(-1)[plan.token_at]  # (N,)
    # leaves' embeddings are rows of the numbers' embeddings flattened to (B * (C+Q), H)
    n_numbers = ctx.num_emb.shape[1]
    numbers = StepStore.of(ctx.num_emb.reshape(B * n_numbers, -1))
    row_start = plan.token_row * n_numbers  # (N,) each decoded token's first row of the numbers
    leaf_at = row_start + (tokens_in_order - dec.n_ops).clamp(0, n_numbers - 1)  # (N,)
    start = 0  # first row of step t among all steps' rows
    for t in range(L):
        n = active[t]
        rows = prefixes[n]
        if t == 0:
            goal = dec.left_goal(rows.problem, layers, drop)
        else:
            parts = []
            if plan.n_left[t]:
                parts.append(dec.left_goal(op_left.read(plan.left_goal_at[t]), layers, drop))
            if plan.n_right[t]:
                sibling, parent = subtrees.read(plan.sibling_at[t]), op_right.read(plan.right_goal_at[t])
                parts.append(dec.right_goal(sibling, parent, layers, drop))
            goal = parts[0] if len(parts) == 1 else torch.cat(parts)[plan.unsort[t]]  # (n, H)
        context = dec.attend(rows, goal, layers, drop)
        tok = tokens_in_order[start: start + n]
        goal_context = torch.cat([goal, context], -1)  # (n, 2H)
        if choose_at[t]:  # the step's quantity scores, as the pass below computes them, pick the slot
            with torch.no_grad():
                scores = dec.quantity_scores(rows.num_proj[:, dec.n_constants:], goal_context,
                                             drop=lambda site, x, start=start: drop.at(site, start, x))
            best = scores.masked_fill_(not_from[t, :n], float("-inf")).argmax(1) + (dec.n_ops + dec.n_constants)
            tok = torch.where(choosing[t, :n], best, tok)
            leaf = row_start[start: start + n] + (tok - dec.n_ops).clamp(0, n_numbers - 1)
        else:
            leaf = leaf_at[start: start + n]
        goal_contexts.append(goal_context)
        tokens.append(tok)
        ops = plan.ops[t]  # gathers index with a tensor (one operation fewer than index_select)
        if ops.numel():
            left, right = dec.child_goals_with(goal_context[ops], op_label.read(plan.op_rows_at[t]), layers, drop)
            op_left.append(left)
            op_right.append(right)
        subtrees.append(numbers.read(leaf))  # (n, H) leaf embeddings; operator rows hold a placeholder never read
        for k in range(len(plan.merge_rows[t])):
            at = plan.merge_self_at[t][k]
            merged = dec.merge_subtrees(op_label.read(plan.merge_label_at[t][k]),
                                        subtrees.read(plan.merge_left_at[t][k]), subtrees.read(at), layers, drop)
            subtrees.write_at(at, merged)
        start += n
    # every decoded token's scores at once: rows step after step, as plan.token_row lists them
    row = plan.token_row
    logits = dec.logits_of(ctx.num_proj.index_select(0, row), ctx.num_mask.index_select(0, row),
                           torch.cat(goal_contexts), layers, lambda site, x: drop.at(site, 0, x))
    logp = logits.log_softmax(-1).gather(1, torch.cat(tokens)[:, None]).squeeze(1)  # (N,)
    flat = logp.new_zeros(B * L).index_put((plan.token_at,), logp)
    return torch.zeros_like(flat).view(B, L).index_copy(0, order, flat.view(B, L))  # (B, L), in input order


def tree_loss(decoder: GTSDecoder, ctx: DecoderContext, batch, any_equal_slot: bool) -> torch.Tensor:
    """Mean negative log-likelihood per target token of a :class:`solvers.vocab.Batch` (the public
    code's masked cross-entropy); ``any_equal_slot`` lets a repeated value come from any of its slots."""
    qty_class = batch.qty_class if any_equal_slot and batch.has_repeated_values else None
    logp = decoder.token_log_probs(ctx, batch.target, batch.target_mask, qty_class)
    return -logp.sum() / batch.target_mask.sum()
