"""The goal-driven tree decoder of GTS (Xie & Sun 2019), batched across problems.

Any encoder can feed it (the GTS GRU in solvers/gts.py, a BERT encoder in solvers/bert_gts.py): it
needs encoder states ``enc`` (B, T, H), a text mask, one problem vector (B, H) (the root goal) and
the token positions of the quantities. This module holds the decoder's building blocks, which
teacher forcing and beam search share. It follows the public implementation's equations: a goal
``q`` is gated from its parent's child goal (left child) or from that plus the finished left
sibling's subtree embedding (right child); ``q`` attends over the encoder states; operators are
scored from ``[q; context]``, constants and quantities by attention of ``[q; context]`` against
learned constant embeddings and the encoder states at the quantity positions; an operator node
generates left/right child goals from ``[q; context; operator embedding]``; finished subtrees are
merged bottom-up into one embedding. Every ``W[a; b]`` over encoder positions is split into
``W_a a + W_b b`` with the encoder half computed once per batch (same function, less work), and
dropout on the number embeddings is drawn once per batch instead of once per node.

Batching, which the public code does not do (it walks per-example Python stacks):
- teacher forcing (solvers/gts_teacher.py, with the index plan of solvers/gts_plan.py): the target
  prefix is known, so step ``t`` is a handful of batched tensor ops over the problems still
  decoding, gathering earlier steps' outputs by index, each op run only on the rows that use its
  result; it calls the blocks below with its deferred layers and per-pass dropout masks;
- beam search (solvers/gts_beam.py): B x beam hypotheses as rows of one tensor, the node and
  subtree stacks as (rows, depth, H) tensors, constrained to valid prefix expressions over the
  problem's own quantity slots.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from solvers.dropout import Dropout
from solvers.fusion import fusing, pointwise
from solvers.step_autograd import DeferredLinears, gate, row_prefixes

NEG = -1e12  # logit of a masked choice (finite, so that an empty choice set cannot produce NaN)
# dropout of one of the decoder's inputs, named by its site (solvers/gts_teacher.py's PassDropout);
# without one each block applies the module's own Dropout
Drop = Callable[[str, torch.Tensor], torch.Tensor]


@dataclass
class DecoderContext:
    """Per-batch tensors the decoder reads at every step (rows = problems, or problems x beam)."""

    enc: torch.Tensor  # (R, T, H) encoder states
    enc_proj: torch.Tensor  # (R, T, H) encoder half of the attention layer
    text_bias: torch.Tensor  # (R, T) float32, 0 on real tokens, NEG on padding (added to attention energies)
    num_emb: torch.Tensor  # (R, C+Q, H) constant embeddings then quantity states (no dropout)
    num_proj: torch.Tensor  # (R, C+Q, H) number half of the scoring layer (dropout applied)
    num_mask: torch.Tensor  # (R, C+Q) bool, True on usable constants and quantities
    problem: torch.Tensor  # (R, H) root goal input

    def _fields(self) -> tuple[torch.Tensor, ...]:
        return (self.enc, self.enc_proj, self.text_bias, self.num_emb, self.num_proj, self.num_mask, self.problem)

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


def state_dtype(like: torch.Tensor) -> torch.dtype:
    """The dtype the decoder carries its goals, subtree embeddings and encoder states in: autocast's
    when autocast is on for ``like``'s device (its linear layers then return that dtype, and every
    tensor they meet, in a cat, an index_copy or a beam stack, must match), else ``like``'s own.
    Logits and log-probabilities are float32 either way."""
    device = like.device.type
    # (meta tensors, shapes without values, have no autocast: tests/solvers/test_gts_dense.py runs a pass on them)
    if device != "meta" and torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return like.dtype


def _as(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x`` in ``dtype``, dispatching nothing when it already is (``x.to`` would be an operation)."""
    return x if x.dtype == dtype else x.to(dtype)


def _float32(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32 when it is in a 16-bit float type (autocast's), else as it is."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


@pointwise
def _attention_weights(goal_proj: torch.Tensor, enc_proj: torch.Tensor, v: torch.Tensor,
                       text_bias: torch.Tensor) -> torch.Tensor:
    """Attention weights (R, T), float32, of goals' projections (R, H) over the encoder's (R, T, H), scored by v
    (H,) and masked by ``text_bias``: :meth:`GTSDecoder.attend_over`'s, the energies a sum over H rather than a
    product, so that TorchInductor fuses them with the tanh before them."""
    energy = (torch.tanh(goal_proj[:, None] + enc_proj) * v).sum(-1)
    return (_float32(energy) + text_bias).softmax(-1)


_STEP_LAYERS = ("goal_left", "goal_right", "attn_goal", "score_leaf", "ops", "generate", "merge")
# How teacher forcing walks the target trees: "waves" (solvers/gts_waves.py), a step a tree level, the goals of
# all nodes whose parents are done at once; "positions" (solvers/gts_teacher.py), a step a prefix position.
# The same log-probabilities and gradients (float64 tests); waves take fewer, larger steps.
TEACHER_PASSES = ("waves", "positions")


def check_teacher_pass(name: str) -> None:
    if name not in TEACHER_PASSES:
        raise ValueError(f"teacher_pass must be one of {', '.join(TEACHER_PASSES)}, got {name!r}")


class GTSDecoder(nn.Module):
    def __init__(self, hidden_size: int, embedding_size: int, n_ops: int, n_constants: int, dropout: float,
                 teacher_pass: str = "waves"):
        super().__init__()
        check_teacher_pass(teacher_pass)
        H, E = hidden_size, embedding_size
        self.n_ops, self.n_constants = n_ops, n_constants
        self.teacher_pass = teacher_pass
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
        text_bias = torch.zeros(text_mask.shape, device=enc.device).masked_fill_(~text_mask, NEG)  # (B, T)
        return DecoderContext(enc, self.attn_enc(enc), text_bias, num_emb,
                              self.score_num(self.dropout(num_emb)), num_mask, problem)

    def step_layers(self) -> DeferredLinears:
        """The linear layers every decoding step applies, for one teacher-forced pass: their weight
        gradients are computed once over all steps (solvers/step_autograd.py)."""
        return DeferredLinears({name: getattr(self, name) for name in _STEP_LAYERS})

    def _layer(self, layers: DeferredLinears | None, name: str):
        return getattr(self, name) if layers is None else layers[name]

    def _gated(self, layers: DeferredLinears | None, name: str, x: torch.Tensor, pieces: int = 1) -> torch.Tensor:
        """The gated layer ``tanh(value) * sigmoid(gate)`` of the public code, of each of ``pieces``
        [value; gate] parts of the layer's output (R, pieces * H)."""
        return gate(getattr(self, name)(x), pieces) if layers is None else layers.gated(name, x, pieces)

    def _drop(self, drop: Drop | None, site: str, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x) if drop is None else drop(site, x)

    def left_goal(self, parent_goal: torch.Tensor, layers: DeferredLinears | None = None,
                  drop: Drop | None = None) -> torch.Tensor:
        return self._gated(layers, "goal_left", self._drop(drop, "left_goal", parent_goal))

    def right_goal(self, left_subtree: torch.Tensor, parent_goal: torch.Tensor,
                   layers: DeferredLinears | None = None, drop: Drop | None = None) -> torch.Tensor:
        x = self._drop(drop, "right_goal", torch.cat([left_subtree, parent_goal], -1))
        return self._gated(layers, "goal_right", x)

    def attend(self, ctx: DecoderContext, goal: torch.Tensor, layers: DeferredLinears | None = None,
               drop: Drop | None = None) -> torch.Tensor:
        """The attention context (R, H) of goals (R, H) over the encoder states."""
        return self.attend_over(ctx.enc, ctx.enc_proj, ctx.text_bias, goal, layers, drop)

    def attend_over(self, enc: torch.Tensor, enc_proj: torch.Tensor, text_bias: torch.Tensor, goal: torch.Tensor,
                    layers: DeferredLinears | None = None, drop: Drop | None = None) -> torch.Tensor:
        """:meth:`attend` over the three fields of a :class:`DecoderContext` it reads (R rows each)."""
        q = self._drop(drop, "attend", goal)
        R, T, H = enc_proj.shape
        goal_proj = self._layer(layers, "attn_goal")(q)
        if fusing():  # the energies' sum over H, their mask and softmax in a few generated kernels (solvers/fusion.py)
            weights = _attention_weights(goal_proj, enc_proj, _as(self.attn_v.weight.view(H), enc_proj.dtype),
                                         text_bias, fused=True)
        else:
            hidden = torch.tanh(goal_proj[:, None] + enc_proj)  # (R, T, H)
            energy = hidden.view(R * T, H).mv(_as(self.attn_v.weight.view(H), hidden.dtype)).view(R, T)  # attn_v
            # masked and normalized in float32: NEG does not fit in float16, and the weights sum to 1
            weights = (_float32(energy) + text_bias).softmax(-1)
        return torch.bmm(weights[:, None], enc).squeeze(1)  # (R, H); autocast casts the weights

    def logits(self, num_proj: torch.Tensor, num_mask: torch.Tensor, goal: torch.Tensor, context: torch.Tensor,
               layers: DeferredLinears | None = None, drop: Drop | None = None) -> torch.Tensor:
        """Logits (R, n_ops+C+Q), in float32, of goals (R, H) with their contexts (R, H), against the
        number half of the scoring layer ``num_proj`` (R, C+Q, H) and its mask (R, C+Q)."""
        return self.logits_of(num_proj, num_mask, torch.cat([goal, context], -1), layers, drop)

    def logits_of(self, num_proj: torch.Tensor, num_mask: torch.Tensor, goal_context: torch.Tensor,
                  layers: DeferredLinears | None = None, drop: Drop | None = None) -> torch.Tensor:
        """:meth:`logits` of ``[goal; context]`` (R, 2H)."""
        leaf = self._drop(drop, "leaf", goal_context)  # (R, 2H)
        score_leaf = self._layer(layers, "score_leaf")
        num = self.score_v(torch.tanh(score_leaf(leaf)[:, None] + num_proj)).squeeze(-1)  # (R, C+Q)
        num = _float32(num).masked_fill(~num_mask, NEG)
        return torch.cat([_float32(self._layer(layers, "ops")(leaf)), num], -1)

    def quantity_scores(self, qty_proj: torch.Tensor, goal_context: torch.Tensor,
                        drop: Drop | None = None) -> torch.Tensor:
        """The quantity slots' part of :meth:`logits_of` (R, Q), unmasked, in float32, from the
        quantities' rows of ``num_proj`` (R, Q, H): all the repeated-value rule compares."""
        leaf = self._drop(drop, "leaf", goal_context)
        return _float32(self.score_v(torch.tanh(self.score_leaf(leaf)[:, None] + qty_proj)).squeeze(-1))

    def scores(self, ctx: DecoderContext, goal: torch.Tensor,
               layers: DeferredLinears | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits over [operators | constants | the batch's quantity slots] (R, n_ops+C+Q) and the
        attention context (R, H) of goals (R, H)."""
        context = self.attend(ctx, goal, layers)
        return self.logits(ctx.num_proj, ctx.num_mask, goal, context, layers), context

    def child_goals(self, goal: torch.Tensor, context: torch.Tensor, op_ids: torch.Tensor,
                    layers: DeferredLinears | None = None, drop: Drop | None = None):
        """Left and right child goals (R, H) of operator nodes, and the operator embeddings (R, E)."""
        return self.child_goals_of(torch.cat([goal, context], -1), op_ids, layers, drop)

    def child_goals_of(self, goal_context: torch.Tensor, op_ids: torch.Tensor, layers: DeferredLinears | None = None,
                       drop: Drop | None = None):
        """:meth:`child_goals` of ``[goal; context]`` (R, 2H)."""
        label = self.op_labels(op_ids, goal_context.dtype)
        return (*self.child_goals_with(goal_context, label, layers, drop), label)

    def op_labels(self, op_ids: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Operator embeddings (R, E) of operator ids (R,), in ``dtype``."""
        return _as(self.op_embedding(op_ids.clamp(0, self.n_ops - 1)), dtype)

    def child_goals_with(self, goal_context: torch.Tensor, label: torch.Tensor, layers: DeferredLinears | None = None,
                         drop: Drop | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Left and right child goals (R, H) of ``[goal; context]`` (R, 2H) and operator embeddings (R, E)."""
        x = self._drop(drop, "generate", torch.cat([goal_context, label], -1))
        left, right = self._gated(layers, "generate", x, pieces=2).view(x.shape[0], 2, -1).unbind(1)
        return left, right

    def merge_subtrees(self, label: torch.Tensor, left: torch.Tensor, right: torch.Tensor,
                       layers: DeferredLinears | None = None, drop: Drop | None = None) -> torch.Tensor:
        return self._gated(layers, "merge", self._drop(drop, "merge", torch.cat([label, left, right], -1)))

    def leaf_embedding(self, ctx: DecoderContext, ids: torch.Tensor) -> torch.Tensor:
        """Embedding (R, H) of constant/quantity output ids (operator ids give row 0, unused)."""
        index = (ids - self.n_ops).clamp(0, ctx.num_emb.shape[1] - 1)
        return ctx.num_emb.gather(1, index[:, None, None].expand(-1, 1, ctx.num_emb.shape[-1])).squeeze(1)

    def token_log_probs(self, ctx: DecoderContext, target: torch.Tensor, target_mask: torch.Tensor,
                        qty_class: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L) log-probability of each target token given the gold prefix so far (0 at padding);
        see :func:`solvers.gts_teacher.teacher_forced_log_probs`. Computed by ``self.teacher_pass``."""
        from solvers.gts_teacher import teacher_forced_log_probs
        from solvers.gts_waves import wave_log_probs

        pass_ = wave_log_probs if self.teacher_pass == "waves" else teacher_forced_log_probs
        return pass_(self, ctx, target, target_mask, qty_class)
