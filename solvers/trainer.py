"""One trainer for every torch solver, plus batched prediction, likelihood and encoding loops.

A model the trainer drives is a ``torch.nn.Module`` with four methods over a :class:`Batch`
(see :class:`SolverModel`): ``loss`` (scalar, with dropout in train mode), ``token_log_probs``
(teacher-forced, (B, L), 0 at padding), ``beam_search`` (one :class:`Hypothesis` per problem, only
valid prefix expressions over the problem's own slots) and ``encode`` ((B, H) pooled vectors).

Training: seeded, device auto (CUDA when available, else CPU), mixed precision on CUDA (bf16, or fp16
with a gradient scaler where bf16 is missing; and bfloat16
on CPU with ``precision="bf16"``; ``TrainResult.precision`` says what ran), Adam with weight decay,
learning rate halved every ``lr_halving_epochs``, gradient clipping, length-bucketed shuffled batches,
best epoch chosen on VALIDATION answer accuracy only (a copy of its weights is kept and restored at the
end), optional early stopping, one tqdm bar over every epoch's batches (so
its ETA is the whole training's). ``EpochStats.seconds`` is the training pass alone (validation
excluded); ``TrainResult.seconds`` is everything. Nothing is logged: per-epoch :class:`EpochStats`
go to ``on_epoch`` and into the returned :class:`TrainResult`. With ``TrainConfig.resume_dir`` the
state after each epoch is saved there, and a training started again continues from it
(solvers/train_state.py).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import math
import platform
import random
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, Sequence

import torch
from tqdm.auto import tqdm

from mwp.problem import Problem
from solvers.base import GRAPHED_STEPS, EpochStats, Likelihood, Prediction, TrainConfig, TrainResult
from solvers import train_state
from solvers.evaluate import evaluate_predictions, prediction_expression
from solvers.fusion import check_fusion_available
from solvers.vocab import Batch, Encoding, EncodingError

LOSS_SHOWN_EVERY = 2.0  # seconds between the progress bar's reads of the running training loss


@dataclass(frozen=True)
class Hypothesis:
    ids: tuple[int, ...]  # output ids in prefix order
    score: float  # summed log-probability


class SolverModel(Protocol):
    def loss(self, batch: Batch) -> torch.Tensor: ...
    def token_log_probs(self, batch: Batch) -> torch.Tensor: ...
    def beam_search(self, batch: Batch, beam_size: int) -> list[Hypothesis]: ...
    def encode(self, batch: Batch) -> torch.Tensor: ...


@contextlib.contextmanager
def float32_products(enabled: bool = True) -> Iterator[None]:
    """While the block runs, float32 matrix products on CUDA are float32: TF32 off for cuDNN (its
    convolutions and RNNs, where PyTorch allows TF32 by default) and for cuBLAS matmuls; the flags
    are restored after. On Ampere and later GPUs TF32 keeps 10 of float32's 23 mantissa bits, so a
    training the trainer reports as "fp32" would otherwise run its GRU encoder and convolutions at
    about 1e-3 relative precision. The flags concern CUDA only; on CPU nothing changes."""
    if not enabled:
        yield
        return
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def check_step_runs_here(step: str, graph_fusion: str, device: str) -> None:
    """A ValueError, before any work, where the device ``device`` resolves to here cannot take the training step
    or fusion: TrainConfig checks what it can without the machine, not what ``auto`` is on the one that trains."""
    resolved = resolve_device(device)
    if step in GRAPHED_STEPS and resolved.type != "cuda":
        raise ValueError(f"step {step} captures CUDA graphs and needs a CUDA device; device {device} is the "
                         f"{resolved.type.upper()} here (use step rowwise or dense, or a machine with CUDA)")
    try:
        check_fusion_available(graph_fusion, resolved)
    except RuntimeError as err:
        raise ValueError(str(err)) from err


def set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def length_bucketed(problems: Sequence[Problem], batch_size: int, rng: random.Random | None,
                    steps: Sequence[int] | None = None) -> Iterator[list[Problem]]:
    """Batches of similar text length (less padding); shuffled when ``rng`` is given, else in
    length order (deterministic, for inference). With ``steps`` (one a problem: the decoder's sequential steps,
    TrainConfig.bucketing "steps") each shuffled pool is sorted by them first, then by text length."""
    order = list(range(len(problems)))
    if steps is not None and len(steps) != len(problems):
        raise ValueError(f"{len(steps)} decoder step counts for {len(problems)} problems")
    if rng is None:
        order.sort(key=lambda i: len(problems[i].tokens))
        chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    else:
        rng.shuffle(order)
        pool = batch_size * 16
        chunks = []
        key = ((lambda i: len(problems[i].tokens)) if steps is None else
               (lambda i: (steps[i], len(problems[i].tokens))))
        for start in range(0, len(order), pool):
            part = sorted(order[start:start + pool], key=key)
            chunks += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
        rng.shuffle(chunks)
    for chunk in chunks:
        yield [problems[i] for i in chunk]


def _inference_chunks(problems: Sequence[Problem], batch_size: int) -> Iterator[tuple[list[int], list[Problem]]]:
    order = sorted(range(len(problems)), key=lambda i: len(problems[i].tokens))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        yield idx, [problems[i] for i in idx]


def _device_of(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def _float32_inference(fn):
    """``fn(model, ...)`` with float32 products on CUDA (:func:`float32_products`): inference runs
    without autocast, in float32."""
    @functools.wraps(fn)
    def run(model, *args, **kwargs):
        with float32_products(_device_of(model).type == "cuda"):
            return fn(model, *args, **kwargs)
    return run


@_float32_inference
@torch.no_grad()
def predict(model, encoding: Encoding, problems: Sequence[Problem], beam_size: int = 5, batch_size: int = 64) -> list[Prediction]:
    """Best beam hypothesis per problem, in input order (batched, sorted by length internally)."""
    was_training = model.training
    model.eval()
    device = _device_of(model)
    out: list[Prediction | None] = [None] * len(problems)
    for idx, chunk in _inference_chunks(problems, batch_size):
        hyps = model.beam_search(encoding.batch(chunk, with_targets=False).to(device), beam_size)
        for i, hyp in zip(idx, hyps):
            tokens = encoding.decode(hyp.ids)
            out[i] = Prediction(tokens=tokens, expression=prediction_expression(tokens), score=hyp.score)
    model.train(was_training)
    return out  # type: ignore[return-value]


@_float32_inference
@torch.no_grad()
def log_likelihoods(model, encoding: Encoding, problems: Sequence[Problem], batch_size: int = 64) -> list[Likelihood]:
    """Teacher-forced log-probability of each problem's expression (dropout off)."""
    was_training = model.training
    model.eval()
    device = _device_of(model)
    out: list[Likelihood | None] = [None] * len(problems)
    for idx, chunk in _inference_chunks(problems, batch_size):
        batch = encoding.batch(chunk, with_targets=True).to(device)
        logp = model.token_log_probs(batch).float()  # (B, L)
        totals = (logp * batch.target_mask).sum(1).tolist()
        counts = batch.target_mask.sum(1).tolist()
        for i, total, n in zip(idx, totals, counts):
            out[i] = Likelihood(total=total, per_token=total / n, n_tokens=int(n))
    model.train(was_training)
    return out  # type: ignore[return-value]


@_float32_inference
@torch.no_grad()
def encode_problems(model, encoding: Encoding, problems: Sequence[Problem], batch_size: int = 64) -> torch.Tensor:
    """(N, H) pooled encoder vectors in input order."""
    was_training = model.training
    model.eval()
    device = _device_of(model)
    rows: list[torch.Tensor | None] = [None] * len(problems)
    for idx, chunk in _inference_chunks(problems, batch_size):
        vectors = model.encode(encoding.batch(chunk, with_targets=False).to(device)).float().cpu()
        for i, v in zip(idx, vectors):
            rows[i] = v
    model.train(was_training)
    return torch.stack(rows)  # type: ignore[arg-type]


def autocast_dtype(device: torch.device, precision: str) -> torch.dtype | None:
    """The dtype training autocasts to (None: float32), from ``TrainConfig.precision``."""
    if precision == "fp32" or (precision == "auto" and device.type != "cuda"):
        return None
    if precision == "fp16":
        return torch.float16
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return torch.bfloat16
        if precision == "bf16":
            raise ValueError("precision bf16: this CUDA device does not support bfloat16 (use auto or fp32)")
        return torch.float16
    return torch.bfloat16


def cpu_emulates_bf16() -> bool:
    """Whether this CPU is known to lack bfloat16 products in hardware: an x86 CPU with neither AVX512-BF16 nor AMX,
    where torch emulates them (on a 2-core AVX2 CPU a paper-size GTS's MAWPS epoch took 957 s in bf16 against 32 s
    in float32; docs/solvers.md, session 46). Other CPUs (ARM, whose newer cores have BF16 instructions) and a torch
    without these probes are not judged."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return False
    probes = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return all(probe is not None for probe in probes) and not any(probe() for probe in probes)


def slow_precision_warning(device: torch.device, amp_dtype: torch.dtype | None) -> str | None:
    """What to tell a user whose training will autocast to bfloat16 on a CPU that emulates it; None otherwise."""
    if device.type != "cpu" or amp_dtype != torch.bfloat16 or not cpu_emulates_bf16():
        return None
    return ("precision bf16 on an x86 CPU without bfloat16 hardware (no AVX512-BF16 or AMX): its products are "
            "emulated, about 30x slower than float32 (a paper-size GTS epoch: 957 s against 32 s on a 2-core AVX2 "
            "CPU, docs/solvers.md); use precision fp32 (or auto, float32 on a CPU)")


def make_optimizer(model: torch.nn.Module, config: TrainConfig, device: torch.device) -> torch.optim.Optimizer:
    """The training's Adam: a model may ask for parameter groups (a pretrained encoder fine-tuned with a
    smaller learning rate); fused, one kernel over all parameters (on CPU about 5x faster than the
    per-tensor loop; the same update up to rounding)."""
    params = model.parameter_groups(config.lr) if hasattr(model, "parameter_groups") else model.parameters()
    return torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay,
                            fused=device.type in ("cpu", "cuda"))


def train_step(model, batch, config: TrainConfig, optimizer, scaler, device: torch.device,
               amp_dtype: torch.dtype | None, loss_of: Callable[[Batch], torch.Tensor] | None = None) -> torch.Tensor:
    """One update on a batch: the loss (a tensor, not read back). The batch is on ``device`` for the model's
    own ``loss``; ``loss_of`` (a shape-fixed step, :func:`shape_fixed_loss`) takes it on the host."""
    optimizer.zero_grad(set_to_none=True)  # not zeros: the graphed step needs the old .grad gone (gts_graphs.py)
    with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        loss = (loss_of or model.loss)(batch)
    scaler.scale(loss).backward()
    if config.grad_clip:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
    scaler.step(optimizer)
    scaler.update()
    return loss


def shape_fixed_loss(model, config: TrainConfig, device: torch.device,
                     amp_dtype: torch.dtype | None) -> Callable[[Batch], torch.Tensor] | None:
    """The loss function of ``config.step`` (None: the model's own, the row-wise pass); a ValueError when the
    model has no shape-fixed pass (a model that has one says so by a ``shape_fixed_loss(rows, device, graphed,
    whole, rounding, fusion)`` method; the precision and the device are checked by TrainConfig and the pass itself)."""
    if config.step == "rowwise":
        return None
    if not hasattr(model, "shape_fixed_loss"):
        raise ValueError(f"step {config.step!r}: {type(model).__name__} has no shape-fixed pass (GTS has; "
                         "use step rowwise)")
    graphed = config.step in GRAPHED_STEPS
    assert not graphed or amp_dtype is None, "TrainConfig refuses a graphed step without fp32"
    return model.shape_fixed_loss(config.batch_size, device, graphed=graphed, whole=config.step == "graphed-whole",
                                  rounding=config.graph_rounding, fusion=config.graph_fusion)


def _train_epoch(model, encoding: Encoding, train: Sequence[Problem], config: TrainConfig, optimizer, scaler,
                 rng: random.Random, device: torch.device, amp_dtype: torch.dtype | None, bar,
                 loss_of: Callable[[Batch], torch.Tensor] | None = None,
                 steps: Sequence[int] | None = None) -> float:
    """One pass over ``train`` in shuffled length buckets (``steps``: :func:`bucketing_steps`); the mean batch loss.

    The losses are summed on the device (in float64, as a Python float sum of them would be) and read back
    at the epoch's end, and for the progress bar at most every ``LOSS_SHOWN_EVERY`` seconds: a read after
    every step would make the host wait for the GPU, so it could not build the next batch meanwhile."""
    model.train()
    total_loss, n_batches, shown = None, 0, time.monotonic()
    for chunk in length_bucketed(train, config.batch_size, rng, steps):
        batch = encoding.batch(chunk)
        loss = train_step(model, batch if loss_of else batch.to(device), config, optimizer, scaler, device,
                          amp_dtype, loss_of)
        loss = loss.detach().double()  # a device tensor: summed on the device, read back at the epoch's end
        total_loss = loss if total_loss is None else total_loss + loss
        n_batches += 1
        if not bar.disable and time.monotonic() - shown >= LOSS_SHOWN_EVERY:
            bar.set_postfix(loss=f"{total_loss.item() / n_batches:.3f}", refresh=False)
            shown = time.monotonic()
        bar.update()
    mean = 0.0 if total_loss is None else total_loss.item() / n_batches
    bar.set_postfix(loss=f"{mean:.3f}", refresh=False)
    return mean


def bucketing_steps(model, encoding: Encoding, train: Sequence[Problem], config: TrainConfig) -> list[int] | None:
    """What :func:`length_bucketed` sorts a pool by before text length under ``config.bucketing``: None for
    "length"; for "steps" the model's ``decoder_steps(encoding, problems)``, one count a problem (a ValueError
    when the model has none)."""
    if config.bucketing == "length":
        return None
    if not hasattr(model, "decoder_steps"):
        raise ValueError(f"bucketing {config.bucketing!r}: {type(model).__name__} does not say its decoder's steps "
                         "a problem (GTS and bert-gts do; use bucketing 'length')")
    return list(model.decoder_steps(encoding, train))


def _captured(loss_of) -> tuple[int, float] | None:
    """(captures, capture seconds) so far of a loss function that captures CUDA graphs (the graphed step's
    ``captures`` and ``capture_seconds``); None for any other."""
    if loss_of is None or not getattr(loss_of, "graphed", False):
        return None
    return loss_of.captures, loss_of.capture_seconds


def expressible(encoding: Encoding, problem: Problem) -> bool:
    try:
        encoding.target_ids(problem)
    except EncodingError:
        return False
    return True


def train_model(model: torch.nn.Module, encoding: Encoding, train: Sequence[Problem], valid: Sequence[Problem],
                config: TrainConfig, on_epoch: Callable[[EpochStats], None] | None = None) -> TrainResult:
    """Train ``model`` in place; at the end it holds the weights of the best validation epoch (answer
    accuracy; among tied epochs the one ``config.tie_break`` names; the last epoch when ``valid`` is empty)."""
    if not train:
        raise ValueError("no training problems")
    set_seed(config.seed)
    device = resolve_device(config.device)
    model.to(device)
    # Encode once up front: an unencodable problem fails here, naming its id, not mid-epoch.
    for p in train:
        encoding.target_ids(p)
    optimizer = make_optimizer(model, config, device)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=max(1, config.lr_halving_epochs), gamma=0.5)
    amp_dtype = autocast_dtype(device, config.precision)  # resolved once, not per batch
    if (slow := slow_precision_warning(device, amp_dtype)) is not None:
        warnings.warn(slow, RuntimeWarning, stacklevel=2)
    # float16 gradients underflow without loss scaling; bfloat16 has float32's range and needs none
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    loss_of = shape_fixed_loss(model, config, device, amp_dtype)
    steps = bucketing_steps(model, encoding, train, config)
    rng = random.Random(config.seed)
    # the validation problems a loss is read on (an expression the vocabularies cannot express has none)
    loss_valid = [p for p in valid if expressible(encoding, p)] if config.tie_break == "valid-loss" else []
    history: list[EpochStats] = []
    best_state, best_epoch, best_acc, best_loss, stale = None, 0, -1.0, None, 0
    state_file, first_epoch, finished = None, 1, False
    if config.resume_dir is not None:
        state_file = train_state.state_path(config.resume_dir)
        expected = train_state.identity(config, train, valid, model)
        if state_file.exists():
            saved = train_state.load(state_file, expected, device)
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            scaler.load_state_dict(saved["scaler"])
            rng.setstate(train_state.as_random_state(saved["batch_order"]))
            train_state.restore_random_states(saved["random"])
            history = [EpochStats(**e) for e in saved["history"]]
            best_state, best_epoch, best_acc, stale = saved["best_state"], saved["best_epoch"], saved["best_acc"], saved["stale"]
            best_loss = saved.get("best_loss")
            first_epoch, finished = saved["epoch"] + 1, saved["finished"]
    started = time.perf_counter()
    batches_per_epoch = math.ceil(len(train) / config.batch_size)
    # One bar over every batch of every epoch: its ETA is the whole training's (validation time included
    # in the measured rate), not one epoch's.
    bar = tqdm(total=config.epochs * batches_per_epoch, initial=(first_epoch - 1) * batches_per_epoch,
               disable=not config.progress, desc=f"epoch {first_epoch}/{config.epochs}", unit="batch", leave=False)
    # "fp32" on CUDA means float32 products, not TF32 (float32_products)
    exact = float32_products(device.type == "cuda" and amp_dtype is None)
    exact.__enter__()
    try:
        for epoch in range(first_epoch, config.epochs + 1):
            if finished:
                break
            t0 = time.perf_counter()
            lr = optimizer.param_groups[0]["lr"]
            bar.set_description(f"epoch {epoch}/{config.epochs}", refresh=False)
            captured_before = _captured(loss_of)
            train_loss = _train_epoch(model, encoding, train, config, optimizer, scaler, rng, device, amp_dtype, bar,
                                      loss_of, steps)
            scheduler.step()
            train_seconds = time.perf_counter() - t0
            captured = _captured(loss_of)
            captures, capture_seconds = ((captured[0] - captured_before[0], captured[1] - captured_before[1])
                                         if captured is not None and captured_before is not None else (None, None))
            answer_acc = equation_acc = valid_loss = None
            validate = valid and (epoch % max(1, config.eval_every) == 0 or epoch == config.epochs)
            if validate:
                report = evaluate_predictions(valid, predict(model, encoding, valid, config.beam_size, config.batch_size))
                answer_acc, equation_acc = report.answer_acc, report.equation_acc
                if loss_valid:
                    valid_loss = -math.fsum(x.total for x in log_likelihoods(model, encoding, loss_valid,
                                                                             config.batch_size)) / len(loss_valid)
            stats = EpochStats(epoch=epoch, train_loss=train_loss, seconds=train_seconds,
                               valid_answer_acc=answer_acc, valid_equation_acc=equation_acc, lr=lr, valid_loss=valid_loss,
                               captures=captures, capture_seconds=capture_seconds)
            history.append(stats)
            if answer_acc is not None:
                # patience counts epochs without a better accuracy; a tie with a lower loss is kept, not progress
                stale = 0 if answer_acc > best_acc else stale + 1
                if answer_acc > best_acc or (answer_acc == best_acc and valid_loss is not None
                                             and best_loss is not None and valid_loss < best_loss):
                    best_acc, best_epoch, best_loss = answer_acc, epoch, valid_loss
                    best_state = copy.deepcopy(model.state_dict())
                finished = bool(config.patience and stale >= config.patience)
            finished = finished or epoch == config.epochs
            if state_file is not None:
                train_state.save(state_file, {
                    "identity": expected, "epoch": epoch, "finished": finished, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                    "scaler": scaler.state_dict(), "batch_order": rng.getstate(),
                    "random": train_state.random_states(), "history": [dataclasses.asdict(e) for e in history],
                    "best_state": best_state, "best_epoch": best_epoch, "best_acc": best_acc, "best_loss": best_loss,
                    "stale": stale})
            if on_epoch is not None:
                on_epoch(stats)
    finally:
        exact.__exit__(None, None, None)
        bar.close()
        if loss_of is not None and hasattr(loss_of, "close"):
            loss_of.close()  # the graphed step's captures and their memory
    if best_state is not None:
        model.load_state_dict(best_state)
    else:
        best_epoch = history[-1].epoch
    model.eval()
    return TrainResult(epochs=tuple(history), best_epoch=best_epoch,
                       best_valid_answer_acc=best_acc if best_acc >= 0 else None,
                       seconds=time.perf_counter() - started, precision=precision_name(amp_dtype))


def precision_name(amp_dtype: torch.dtype | None) -> str:
    """What a training's products ran in: "fp32", "bf16" or "fp16"."""
    return {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[amp_dtype]
