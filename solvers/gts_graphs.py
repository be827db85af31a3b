"""GTS's training loss through the shape-fixed pass, one CUDA graph a padded batch shape (issue #32).

On a GPU the trainer's row-wise teacher forcing (solvers/gts_teacher.py) launches about 3,700 kernels a
MAWPS batch one by one from Python and keeps the GPU busy a tenth of the step (docs/solvers.md). Here a
batch is padded up to a rounded shape (T tokens to a multiple of 16, L target positions and Q quantity
slots of 4, K merge levels of 2, B rows to the batch size), its plan built on the host
(solvers/gts_dense.py), the encoder run eagerly, and the decoder's loss pass, whose kernels depend on
that shape alone, captured once a shape with ``torch.cuda.make_graphed_callables`` and replayed (step
``graphed``). Step ``graphed-whole`` captures the encoder with it (:class:`WholeLoss`: its masked recurrence,
whose operations depend on the shapes alone): on the H200 a steady step of ``graphed`` still dispatched 1,135 aten
operations and 1,664 kernel launches from the host besides its two graph launches, the eager encoder's forward
and backward among them (605 aten operations of a row-wise batch there). Step ``dense`` runs
the padded pass eagerly: on the CPU it is how tests exercise this code; eager, it dispatches about 40% more
operations than the row-wise pass (docs/solvers.md).

The captured pass keeps the dropout it was captured with (the decoder's, on while training); a replay
draws new masks, as captured random draws advance the generator's offset (a CUDA test asserts it; it
passed on the H200 on 2026-11-27, with the rest of tests/solvers/test_cuda.py). The optimizer, gradient
clipping (and with ``graphed`` the encoder) stay outside the graph. float32 only: autocast inside a captured
graph needs its cast cache off, not tried on a GPU yet.

Which pass a shape-fixed step runs follows the model's ``teacher_pass``: ``waves`` (the default) the padded wave
pass of solvers/gts_wave_graph.py (:class:`WaveLoss`, a decoder step a tree level, its shapes rounded as
``WAVE_ROUNDINGS`` say, TrainConfig.graph_rounding choosing: on the CPU 1.3 to 5 times fewer aten operations a
batch than the dense pass, 3.5x on the median of five MAWPS batches, docs/solvers.md), ``positions`` the dense
pass (:class:`DenseLoss`, a step a prefix position, the pass the first H200 runs of 2026-11-27 captured).
"""
from __future__ import annotations

import contextlib
import copy
import gc
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields

import torch
from torch import nn

from solvers.base import GRAPH_ROUNDINGS
from solvers.device_copy import to_device
from solvers.fusion import check_fusion_available, fusion
from solvers.gts_decoder import DecoderContext, check_teacher_pass
from solvers.gts_dense import DensePlan, dense_log_probs, plan_of_targets
from solvers.gts_wave_graph import (PaddedWavePlan, padded_wave_log_probs, plan_of_batch_targets, round_up,
                                    round_up_geometric)
from solvers.vocab import Batch


class DenseLoss(nn.Module):
    """The decoder's summed negative log-likelihood of a batch through the dense pass, every input a tensor
    argument (what make_graphed_callables captures): the context's fields, the targets, the repeated-value
    classes (read only when ``repeated_values``) and the plan."""

    def __init__(self, decoder, repeated_values: bool = True):
        super().__init__()
        self.decoder = decoder
        self.repeated_values = repeated_values

    def forward(self, enc, enc_proj, text_bias, num_emb, num_proj, num_mask, problem, target, target_mask, qty_class,
                parent, is_right, left_step, merge_pos, merge_left, merge_valid):
        ctx = DecoderContext(enc, enc_proj, text_bias, num_emb, num_proj, num_mask, problem)
        plan = DensePlan(parent, is_right, left_step, merge_pos, merge_left, merge_valid)
        qty = qty_class if self.repeated_values else None
        return -dense_log_probs(self.decoder, ctx, target, target_mask, qty, plan).sum()


class WaveLoss(nn.Module):
    """:class:`DenseLoss` through the padded wave pass (solvers/gts_wave_graph.py): the plan's arguments are a
    :class:`PaddedWavePlan`'s fields, in its order."""

    def __init__(self, decoder, repeated_values: bool = True):
        super().__init__()
        self.decoder = decoder
        self.repeated_values = repeated_values

    def forward(self, enc, enc_proj, text_bias, num_emb, num_proj, num_mask, problem, target, target_mask, qty_class,
                *plan_fields):
        ctx = DecoderContext(enc, enc_proj, text_bias, num_emb, num_proj, num_mask, problem)
        qty = qty_class if self.repeated_values else None
        return -padded_wave_log_probs(self.decoder, ctx, target, target_mask, qty, PaddedWavePlan(*plan_fields)).sum()


class WholeLoss(nn.Module):
    """A decoder's loss pass (``decoder_loss``: :class:`WaveLoss`, the default, or :class:`DenseLoss`) with the
    encoder inside: the summed negative log-likelihood of a padded batch from its token ids, every input a tensor
    argument (what make_graphed_callables captures for step ``graphed-whole``). The encoder runs its masked
    recurrence (solvers/fast_gru.py), whose operations depend on the shapes alone, on every device; the packed
    cuDNN recurrence the other steps use on CUDA depends on the lengths."""

    def __init__(self, model: nn.Module, decoder_loss: nn.Module | None = None):
        super().__init__()
        self.model = model
        self.decoder_loss = WaveLoss(model.decoder) if decoder_loss is None else decoder_loss

    def forward(self, tokens, lengths, qty_positions, qty_mask, *targets_and_plan):
        ctx = self.model.context_of(tokens, lengths, qty_positions, qty_mask, shape_fixed=True)
        return self.decoder_loss(*ctx._fields(), *targets_and_plan)


Plan = DensePlan | PaddedWavePlan


def _targets_and_plan(batch: Batch, plan: Plan) -> tuple[torch.Tensor, ...]:
    """The arguments :class:`DenseLoss` and :class:`WholeLoss` take after the context's or the batch's."""
    # without classes every slot is its own (no repeated value), as the row-wise pass reads a missing qty_class
    qty_class = batch.qty_class
    if qty_class is None:
        slots = torch.arange(batch.qty_positions.shape[1], device=batch.qty_positions.device)
        qty_class = slots.expand_as(batch.qty_positions).contiguous()  # a graph copies new inputs into it
    return (batch.target, batch.target_mask, qty_class, *(getattr(plan, f.name) for f in fields(plan)))


def dense_args(ctx: DecoderContext, batch: Batch, plan: Plan) -> tuple[torch.Tensor, ...]:
    """:class:`DenseLoss`'s arguments (or :class:`WaveLoss`'s, with a :class:`PaddedWavePlan`), in its order."""
    return (*ctx._fields(), *_targets_and_plan(batch, plan))


def whole_args(batch: Batch, plan: Plan) -> tuple[torch.Tensor, ...]:
    """:class:`WholeLoss`'s arguments, in its order: the batch's on its device (its lengths too)."""
    lengths = to_device(batch.lengths, batch.tokens.device)  # the host's lengths, pinned: no wait
    return (batch.tokens, lengths, batch.qty_positions, batch.qty_mask, *_targets_and_plan(batch, plan))


@dataclass(frozen=True)
class CaptureFootprint:
    """Bytes one captured shape holds, counted from tensor shapes (no allocator: its rounding, the CUDA
    graph's own memory and cuBLAS workspaces are not in it)."""

    inputs: int  # the static inputs the capture copies each batch into (kept while the capture lives)
    grads: int  # what its backward graph writes: the inputs' gradients and the decoder parameters' (kept)
    saved: int  # what its forward saves for the backward: freed once the capture ends, scratch the next reuses

    @property
    def kept(self) -> int:
        return self.inputs + self.grads


def capture_footprint(loss: nn.Module, args: tuple[torch.Tensor, ...]) -> CaptureFootprint:
    """The pass a graphed step captures (``loss``, a :class:`DenseLoss` or a :class:`WholeLoss`), forward and
    backward, run on the ``meta`` device, which has shapes and no values: it raises where the pass would read
    a value back to the host (``.item()``, ``.tolist()``, a data-dependent shape such as ``nonzero``) or mix in
    a tensor made on the host, none of which a CUDA graph can capture; and it counts what a capture of ``args``
    keeps (:class:`CaptureFootprint`). ``loss`` may already be on ``meta`` (a copy is moved there otherwise);
    ``args`` as :func:`dense_args` or :func:`whole_args` gives them, their ``requires_grad`` as in training.
    Saved tensors are those autograd records; the decoder's step layers save theirs the same way
    (solvers/step_autograd.py). Not caught here: a tensor the pass builds from host values onto the arguments'
    device (``torch.tensor(values, device=x.device)``), which meta accepts and a capture does not (a host copy);
    the pass builds none today (read, 2026-11-27)."""
    if next(loss.parameters()).device.type != "meta":
        loss = copy.deepcopy(loss).to("meta")
    meta_args = tuple(a.detach().to("meta").requires_grad_(a.requires_grad) for a in args)
    params = list(loss.parameters())
    known = {t.untyped_storage()._cdata for t in (*params, *meta_args)}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage._cdata not in known:
            saved[storage._cdata] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        total = loss(*meta_args)
    wanted = [a for a in meta_args if a.requires_grad] + [p for p in params if p.requires_grad]
    grads = torch.autograd.grad(total, wanted, allow_unused=True)
    return CaptureFootprint(inputs=sum(_nbytes(a) for a in meta_args),
                            grads=sum(_nbytes(g) for g in grads if g is not None), saved=sum(saved.values()))


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def rounded_plan(batch: Batch, n_ops: int, rows: int | None = None) -> tuple[tuple[int, int, int, int], DensePlan]:
    """The padded shape a batch is captured at, (T, L, Q, K): tokens T up to a multiple of 16, target positions
    L and quantity slots Q of 4, merge levels K of 2; and the batch's plan at that shape (``rows`` rows)."""
    assert batch.target is not None and batch.target_mask is not None, "a training batch has targets"
    L = round_up(batch.target.shape[1], 4)
    plan = plan_of_targets(batch.target, batch.target_mask, n_ops, L, rows, level_multiple=2)
    return (round_up(batch.tokens.shape[1], 16), L, round_up(batch.qty_positions.shape[1], 4), plan.levels), plan


@dataclass(frozen=True)
class WaveRounding:
    """How far the padded wave pass rounds a batch's shape up: each rounded shape is a capture (its seconds, the
    memory it keeps), each padded row, position or slot costs the replay flops only, and each padded wave or
    merge level as many kernels as a real one. So the sizes that cost flops alone are rounded coarsely and the
    waves W and levels H0 to a multiple. A padded token costs the decoder flops only, but the encoder's masked
    recurrence (in the pass with step graphed-whole) runs a step a token, a few kernels each: with the encoder
    in the pass, tokens go to a multiple of ``encoder_tokens``.

    ``geometric``: tokens T, target positions L and quantity slots Q go to the smallest ``tokens`` (``positions``,
    ``slots``) times a power of two, the rows R of a wave and M0 of a merge level before the waves to B *
    ``rows`` times a power of two (B: the step's batch rows); otherwise each to a multiple of its figure (rows:
    of B * ``rows``). The rows A of the merge level after each wave (the repeated-value rule) go to a multiple
    of ``merges``, W and H0 to multiples of ``waves`` and ``levels``."""

    tokens: int
    positions: int
    slots: int
    rows: int
    waves: int
    levels: int
    merges: int = 16
    geometric: bool = True
    encoder_tokens: int = 32

    def up(self, n: int, unit: int) -> int:
        return round_up_geometric(n, unit) if self.geometric else round_up(n, unit)

    def tokens_of(self, n: int, encoder: bool) -> int:
        """T for a batch of ``n`` tokens; ``encoder``: the encoder runs in the captured pass."""
        return round_up(n, self.encoder_tokens) if encoder else self.up(n, self.tokens)


# Counted over 80 epochs of the trainer's batches (batch 64, seed 0's order; bench/graph_memory.py --shapes-only,
# docs/solvers.md): "coarse" (the default) 32 MAWPS shapes and 118 Math23K ones (with the encoder in the pass,
# graphed-whole: 40 and 169), 13 and 48 of them in the first epoch (17 and 60); "fine" (the rounding of the
# session-36 H200 runs) 68 and 473, 19 and 93 in the first epoch, for either step.
WAVE_ROUNDINGS = {
    "coarse": WaveRounding(tokens=64, positions=32, slots=16, rows=2, waves=2, levels=2),
    "fine": WaveRounding(tokens=32, positions=16, slots=4, rows=1, waves=2, levels=2, geometric=False),
}


assert tuple(WAVE_ROUNDINGS) == GRAPH_ROUNDINGS, "TrainConfig.graph_rounding's names are these"


def check_wave_rounding(name: str) -> WaveRounding:
    if name not in WAVE_ROUNDINGS:
        raise ValueError(f"unknown wave rounding {name!r}: choose one of {sorted(WAVE_ROUNDINGS)}")
    return WAVE_ROUNDINGS[name]


def rounded_wave_plan(batch: Batch, decoder, rows: int | None = None, repeated_values: bool = True,
                      rounding: WaveRounding = WAVE_ROUNDINGS["coarse"],
                      encoder: bool = False) -> tuple[tuple[int, ...], PaddedWavePlan]:
    """The padded shape the wave pass captures a batch at, (T, L, Q, W, R, H0, M0, A, rule) rounded as
    ``rounding`` says (:class:`WaveRounding`; ``encoder``: the encoder runs in the pass, step graphed-whole), and
    the batch's :class:`PaddedWavePlan` at that shape (``rows`` rows, default the batch's)."""
    assert batch.target is not None and batch.target_mask is not None, "a training batch has targets"
    T = rounding.tokens_of(batch.tokens.shape[1], encoder)
    L, Q = (rounding.up(n, unit) for n, unit in ((batch.target.shape[1], rounding.positions),
                                                  (batch.qty_positions.shape[1], rounding.slots)))
    plan = plan_of_batch_targets(decoder, batch.target, batch.target_mask,
                                 batch.qty_class if repeated_values else None, decoder.n_constants + Q, L, rows,
                                 row_multiple=(rows or batch.size) * rounding.rows, merge_multiple=rounding.merges,
                                 wave_multiple=rounding.waves, level_multiple=rounding.levels,
                                 geometric_rows=rounding.geometric)
    return (T, L, Q, *plan.key()), plan


@contextlib.contextmanager
def _no_collection(collect: bool = True) -> Iterator[None]:
    """Python's cycle collector kept off while the block runs (a capture), and with ``collect`` run first. A
    capture fails when a CUDA graph is destroyed while it runs ("operation not permitted when stream is
    capturing (function reset)", then cudaErrorStreamCaptureInvalidated): an earlier training's or bench's
    graphs that only the collector frees (a graphed callable refers to itself) are such graphs if it runs
    mid-capture. torch's capture collected first itself until torch 2.9 made that optional
    (torch.compiler.config.force_cudagraph_gc); the H200 session of 2026-11-27 met exactly this failure in
    a training that followed the bench's own captured steps in one process (docs/solvers.md).

    The collector off is what keeps such a graph alive through the capture; the collection first frees their
    memory before a training captures. A full collection walks every Python object: about 0.4 s in a process
    holding Math23K's data on this project's CPU (MAWPS's: 0.1 s; docs/solvers.md), where the H200's Math23K
    captures took 0.59 s each and MAWPS's 0.35 s, so a training collects before its first capture only."""
    if collect:
        gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _step(whole: bool) -> str:
    """The TrainConfig.step that captures graphs of this kind, as error messages name it."""
    return "graphed-whole" if whole else "graphed"


# Eager forward and backward runs before each capture of the whole pass (make_graphed_callables' num_warmup_iters;
# torch's default is 3, "DistributedDataParallel needs 11"). They run on a side stream of their own, not the
# capture's, so what they warm is what a first run loads once (kernels, the autograd engine's device thread,
# cuBLAS's handle); the pass has no cuDNN call to tune. A capture of the decoder's pass cost about 0.9 s on the
# H200, about three eager passes' time (one MAWPS batch: 347.8 ms eager, 1.07 s to capture; docs/solvers.md).
# Not yet run on a GPU with 1.
WHOLE_WARMUPS = 1


class ShapeFixedLoss:
    """A training's loss function for the ``dense``, ``graphed`` and ``graphed-whole`` steps: called with a batch
    still on the host (its plan is read from the host targets, so no step waits on the GPU), it returns the mean
    negative log-likelihood per target token, as the model's own ``loss``. ``graphed`` keeps one captured
    pass a rounded shape for the training's life (``captures``, ``capture_seconds`` say how many and how
    long): the decoder's, the encoder run eagerly before it, or with ``whole`` (step ``graphed-whole``) the
    encoder's and the decoder's in one, so that a replayed step launches from the host only its inputs' copies,
    the clipping's and the optimizer's kernels besides its two graphs.

    With ``graphed``, no loss of an eager pass through the decoder (with ``whole``, through any part of the
    model) may still be referenced when a batch of a new shape comes (the trainer drops each step's loss at
    once): its autograd graph keeps the parameters' gradient accumulators, made on the default stream, and a
    capture whose backward reaches them fails
    (cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking
    stream"; the H200 session of 2026-11-27)."""

    def __init__(self, model: nn.Module, rows: int, device: torch.device, graphed: bool, whole: bool = False,
                 teacher_pass: str | None = None, rounding: str = "coarse", fusion: str = "none"):
        if graphed and device.type != "cuda":
            raise ValueError(f"step '{_step(whole)}' captures CUDA graphs: it needs a CUDA device, not {device.type}")
        check_fusion_available(fusion, device)
        self.fusion = fusion  # the passes' elementwise chains as generated kernels (solvers/fusion.py), or not
        self.model, self.rows, self.device, self.graphed, self.whole = model, rows, device, graphed, whole
        # the padded wave pass, else the dense one: the model's teacher pass unless a bench asks for the other
        if teacher_pass is not None:
            check_teacher_pass(teacher_pass)
        self.waves = (teacher_pass or model.decoder.teacher_pass) == "waves"
        self.rounding = check_wave_rounding(rounding)  # the padded wave pass's (the dense pass has its own)
        self.eager = self.loss_module()
        self.graphs: dict[tuple[int, ...], nn.Module] = {}
        self.capture_seconds = 0.0
        # One memory pool for every capture: a graph's scratch memory (what it frees before its capture ends)
        # is reused by the next capture, which is safe because replays never overlap (forward, backward and
        # the optimizer of one batch, then the next); what a graph keeps (its static inputs, output and
        # gradients) stays its own, but may lie in an earlier capture's scratch, which that capture's replay
        # overwrites. So nothing may hold a capture's output or gradients past its batch: the trainer reads
        # the loss into its sum at once, and zero_grad(set_to_none=True) drops a parameter's .grad, which
        # autograd may have taken from the capture's gradient buffer without a copy, before the next batch.
        self.pool = torch.cuda.graph_pool_handle() if graphed else None

    @property
    def captures(self) -> int:
        return len(self.graphs)

    def loss_module(self) -> nn.Module:
        """The pass this step runs (and captures): the decoder's (:class:`WaveLoss` or, with the model's
        ``teacher_pass`` "positions", :class:`DenseLoss`; the encoder eager before it) or, with ``whole``, the
        encoder's and the decoder's together (:class:`WholeLoss`)."""
        repeated = self.model.cfg.any_equal_slot
        decoder_loss = (WaveLoss if self.waves else DenseLoss)(self.model.decoder, repeated)
        return WholeLoss(self.model, decoder_loss) if self.whole else decoder_loss

    def _captured(self, key, args: tuple[torch.Tensor, ...]) -> nn.Module:
        if key not in self.graphs:
            t0 = time.perf_counter()
            sample = tuple(t.detach().requires_grad_(t.requires_grad) for t in args)
            # without ``whole`` the decoder's layers the context applies (attention's encoder half, the number
            # scorer's, the constants) do no work inside the pass: their gradients flow through the context,
            # outside it. The warm-up runs (eager, on a side stream, before the capture) are torch's default 3
            # for the decoder's pass as measured on the H200; the whole pass takes 1 (WHOLE_WARMUPS)
            try:
                # compiling (with fusion) happens in the warm-up runs: a capture only replays the compiled code
                with _no_collection(collect=not self.graphs), fusion(self.fusion):
                    self.graphs[key] = torch.cuda.make_graphed_callables(
                        self.loss_module(), sample, allow_unused_input=True, pool=self.pool,
                        num_warmup_iters=WHOLE_WARMUPS if self.whole else 3)
            except torch.OutOfMemoryError as e:
                raise torch.OutOfMemoryError(
                    f"step '{_step(self.whole)}': out of GPU memory capturing batch shape {key} with {self.captures} "
                    "shapes captured (each keeps its inputs and gradients, 50 to 100 MiB at paper size; a Math23K "
                    "training captures 120 to 170 with graph_rounding coarse, docs/solvers.md): train with step "
                    "'rowwise' on this GPU"
                ) from e
            self.capture_seconds += time.perf_counter() - t0
        return self.graphs[key]

    def close(self) -> None:
        """Lets the captures and their memory go when the training ends: a graphed callable refers to itself
        (torch wraps its forward in a closure over it), so without a collection the graphs and their pool
        would stay until Python's cycle collector ran, and the next training in the process (a loop's next
        round) would capture beside them; parameters' gradients may point into the pool too."""
        if self.graphs:
            self.model.zero_grad(set_to_none=True)
            self.graphs.clear()
            gc.collect()

    def key_and_plan(self, batch: Batch) -> tuple[tuple[int, ...], Plan]:
        """The rounded shape a batch (on the host) is captured at, and its plan at that shape."""
        if self.waves:
            return rounded_wave_plan(batch, self.model.decoder, self.rows, self.model.cfg.any_equal_slot,
                                     self.rounding, encoder=self.whole)
        return rounded_plan(batch, self.model.decoder.n_ops, self.rows)

    def padded_args(self, batch: Batch) -> tuple[tuple[int, ...], tuple[torch.Tensor, ...]]:
        """The batch's rounded shape, and the pass's arguments: the batch padded to that shape and moved to the
        device, its plan built on the host; the encoder run on it (:func:`dense_args`) or, with ``whole``, the
        batch's own tensors (:func:`whole_args`)."""
        if batch.size > self.rows:
            raise ValueError(f"a batch of {batch.size} rows for a step shaped for {self.rows}")
        key, plan = self.key_and_plan(batch)
        T, L, Q = key[:3]
        padded = batch.padded(T, L, Q, self.rows).to(self.device)
        if self.whole:
            return key, whole_args(padded, plan.to(self.device))
        return key, dense_args(self.model.context(padded), padded, plan.to(self.device))

    def __call__(self, batch: Batch) -> torch.Tensor:
        if self.graphed and not self.model.training:
            raise ValueError(f"step '{_step(self.whole)}' replays the training pass (dropout on): call it in "
                             "train mode")
        key, args = self.padded_args(batch)
        loss_pass = self._captured(key, args) if self.graphed else self.eager
        with self.model.decoder_precision(self.device), fusion(self.fusion):
            total = loss_pass(*args)  # an eager pass's backward follows its forward's fusion (solvers/fusion.py)
        assert batch.target_mask is not None
        return total / int(batch.target_mask.sum())  # the host batch's count: no device read
