"""What a training batch of paper-size GTS dispatches, on the CPU or a GPU: the figures bench/gpu_speed.py reports
beside its seconds (and bench/dense_graph.py for its passes).

- :func:`ops_per_batch`: aten operations (on CUDA also kernels) of a one-epoch fit on one batch, setup included
  (``../shared/tools/ops_per_batch.py``'s count);
- :func:`steady_step`: one training step in steady state on a fixed batch (the train side's first problems), after
  three steps (a graphed step's shape captured), with on CUDA its host waits;
- :func:`epoch_counts`: each of the trainer's first batches of an epoch, in its order, after a first pass took them;
- :func:`part_ops`: the parts of one batch (building it, the encoder's and the whole loss's forward and backward);
- :func:`counted` and :func:`kernel_names`: a profile's figures (aten operations, generated kernels; on CUDA every
  kernel, launches, graph launches, GPU busy share, kernels by name).

:class:`Run` is one training setting the benches measure (precision, step, teacher pass, rounding, fusion,
bucketing)."""
from __future__ import annotations

import collections
import random
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch.profiler import ProfilerActivity, profile

from solvers.base import TrainConfig
from solvers.device_copy import host_waits
from solvers.registry import build_solver


OPS_TARGET = 12_500  # aten operations a paper-size training batch of 64 (issue #32; 1,500 kernels on CUDA)


class Run(NamedTuple):
    """One training setting the bench measures: a precision, a step (TrainConfig.step), the teacher pass, a
    shape-fixed step's rounding and fusion (TrainConfig.graph_rounding, graph_fusion), and the batches' bucketing
    (TrainConfig.bucketing)."""

    precision: str
    step: str = "rowwise"
    teacher_pass: str = "waves"
    rounding: str = "coarse"
    fusion: str = "none"
    bucketing: str = "length"

    @property
    def label(self) -> str:
        """The run's key in the report: the precision for the row-wise step (the keys of reports before --steps),
        with ``-positions`` for its teacher forcing by prefix positions (before 2026-11-27), ``-fine`` for a
        shape-fixed step's fine rounding (the graphed runs of reports made before that setting, the
        *_2026-11-27e records and earlier, rounded so, unlabelled), ``-inductor`` for its fusion and ``-steps`` for
        batches by the decoder's steps."""
        return ((self.precision if self.step == "rowwise" else f"{self.precision}-{self.step}")
                + ("" if self.teacher_pass == "waves" else f"-{self.teacher_pass}")
                + ("" if self.rounding == "coarse" else f"-{self.rounding}")
                + ("" if self.fusion == "none" else f"-{self.fusion}")
                + ("" if self.bucketing == "length" else f"-{self.bucketing}"))

    def config(self, **settings) -> TrainConfig:
        return TrainConfig(precision=self.precision, step=self.step, graph_rounding=self.rounding,
                           graph_fusion=self.fusion, bucketing=self.bucketing, **settings)


FP32 = Run("fp32")


def solver_for(args, device: str, teacher_pass: str = "waves"):
    return build_solver("gts", device=device, embedding_size=args.embedding, hidden_size=args.hidden,
                        teacher_pass=teacher_pass)


def ops_per_batch(args, train, device: str, run: Run = FP32) -> dict:
    """Operations (and on CUDA kernels) of one training batch: a one-epoch fit on ``batch_size``
    problems, profiled after an identical warm-up fit."""
    batch = train[:args.batch_size]
    cfg = run.config(epochs=1, batch_size=args.batch_size, progress=False, device=device, eval_every=10**9)
    solver_for(args, device, run.teacher_pass).fit(batch, [], cfg)  # warm-up (allocator, cuDNN plans, lazy inits)
    solver = solver_for(args, device, run.teacher_pass)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    t0 = time.perf_counter()
    with profile(activities=activities) as prof:
        solver.fit(batch, [], cfg)
        if device == "cuda":
            torch.cuda.synchronize()
    return counted(prof, device, time.perf_counter() - t0)


def steady_step(args, train, device: str, run: Run = FP32) -> dict:
    """The same figures for one training step in steady state: model, vocabularies and optimizer built and
    three steps taken on the same 64 problems first (allocator, cuDNN plans, Adam's state), then one step
    (the trainer's own ``train_step``: zero_grad, loss, backward, clipping, Adam) profiled. What every batch
    after the first costs; the fit above adds the one-time work of building and moving the model. With the
    graphed step the three steps first capture the batch's shape: the profiled step is a replay."""
    from solvers.trainer import autocast_dtype, float32_products, make_optimizer, shape_fixed_loss, train_step
    from solvers.vocab import build_encoding

    problems = train[:args.batch_size]
    encoding = build_encoding(problems, min_count=2)
    dev = torch.device(device)
    model = solver_for(args, device, run.teacher_pass).build_model(encoding).to(dev).train()
    config = run.config(epochs=1, batch_size=args.batch_size, progress=False, device=device)
    optimizer, amp = make_optimizer(model, config, dev), autocast_dtype(dev, run.precision)
    scaler = torch.amp.GradScaler(dev.type, enabled=amp == torch.float16)
    loss_of = shape_fixed_loss(model, config, dev, amp)
    batch = encoding.batch(problems) if loss_of else encoding.batch(problems).to(dev)  # a shape-fixed step moves it
    with float32_products(device == "cuda" and amp is None):
        for _ in range(3):
            train_step(model, batch, config, optimizer, scaler, dev, amp, loss_of)
        out = profiled(lambda: train_step(model, batch, config, optimizer, scaler, dev, amp, loss_of), device)
        if device == "cuda":
            out.update(host_waits(lambda: train_step(model, batch, config, optimizer, scaler, dev, amp, loss_of)))
    return out


EPOCH_FIGURES = ("aten_ops", "generated_kernels", "kernels", "launches", "graph_launches")


def epoch_counts(args, train, device: str, run: Run, batches: int) -> dict:
    """The figures of a training batch as issue #32 first measured them (a profile of 5 training batches: about
    4,600 kernels each), for the trainer's own batches: its first ``batches`` batches of the first epoch, in its
    order (seed ``args.seed``, the run's bucketing), on the vocabularies and model a fit on ``train`` builds. A first
    pass takes each batch's step (a graphed step captures each shape there, a fused one compiles), then each step
    of a second pass over the same batches is profiled alone: what the batches of a long training cost once every
    shape has been captured, as :func:`steady_step` says for one fixed batch of 64. Per batch its text's tokens, its
    aten operations and on CUDA its kernels (a replayed graph's included), launches and graph launches; then the
    mean, median, least and most of each."""
    from solvers.trainer import (autocast_dtype, bucketing_steps, float32_products, length_bucketed, make_optimizer,
                                 set_seed, shape_fixed_loss, train_step)

    solver = solver_for(args, device, run.teacher_pass)
    encoding = solver.build_encoding(train)
    dev = torch.device(device)
    config = run.config(epochs=1, batch_size=args.batch_size, progress=False, device=device, seed=args.seed)
    set_seed(args.seed)  # as the trainer does before its first epoch
    model = solver.build_model(encoding).to(dev).train()
    optimizer, amp = make_optimizer(model, config, dev), autocast_dtype(dev, run.precision)
    scaler = torch.amp.GradScaler(dev.type, enabled=amp == torch.float16)
    loss_of = shape_fixed_loss(model, config, dev, amp)
    order = length_bucketed(train, args.batch_size, random.Random(args.seed),
                            bucketing_steps(model, encoding, train, config))
    chunks = [chunk for _, chunk in zip(range(batches), order)]
    prepared = [encoding.batch(chunk) if loss_of else encoding.batch(chunk).to(dev) for chunk in chunks]
    rows = []
    try:
        with float32_products(device == "cuda" and amp is None):
            for batch in prepared:
                train_step(model, batch, config, optimizer, scaler, dev, amp, loss_of)
            for chunk, batch in zip(chunks, prepared):
                figures = profiled(lambda: train_step(model, batch, config, optimizer, scaler, dev, amp, loss_of),
                                   device)
                rows.append({"tokens": max(len(p.tokens) for p in chunk),
                             **{key: figures[key] for key in EPOCH_FIGURES if key in figures}})
    finally:
        if loss_of is not None and hasattr(loss_of, "close"):
            loss_of.close()  # a graphed step's captures and their memory, before the next arm captures its own
    out: dict = {"batches": len(rows), "per_batch": rows}
    for key in ("tokens", *EPOCH_FIGURES):
        values = [row[key] for row in rows if key in row]
        if values:
            out[key] = {"mean": statistics.mean(values), "median": statistics.median(values), "min": min(values),
                        "max": max(values)}
    return out


def epoch_line(label: str, figures: dict) -> str:
    """:func:`epoch_counts`' figures in a line: the kernels a batch on CUDA, the aten operations elsewhere."""
    key = "kernels" if "kernels" in figures else "aten_ops"
    stats = figures[key]
    return (f"  {label} the trainer's first {figures['batches']} batches, each once taken before: {stats['mean']:.0f} "
            f"{key.replace('_', ' ')} a batch on average (median {stats['median']:.0f}, {stats['min']}-{stats['max']}; "
            f"texts of {figures['tokens']['min']}-{figures['tokens']['max']} tokens)")


def profiled(step: Callable[[], object], device: str) -> dict:
    """:func:`counted`'s figures of one call of ``step``, profiled alone (on CUDA the GPU's queue drained before it
    starts and waited for before the profile ends)."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=activities) as prof:
        step()
        if device == "cuda":
            torch.cuda.synchronize()
    return counted(prof, device, time.perf_counter() - t0)


def counted(prof, device: str, wall: float) -> dict:
    """Aten operations of a profile and the kernels TorchInductor generated that it ran (graph_fusion inductor: on
    the CPU its C++ kernels, each an event of its own, solvers/fusion.py; on CUDA its Triton kernels, named
    ``triton_*``); on CUDA also every kernel, the kernel launches from the host and the GPU-busy share."""
    events = prof.key_averages()
    out = {"aten_ops": sum(e.count for e in events if e.key.startswith("aten::")),
           "generated_kernels": sum(e.count for e in events if "cpp_fused_" in e.key)}
    if device == "cuda":
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        out["kernels"] = len(kernels)
        out["generated_kernels"] = sum(e.name.startswith("triton_") for e in kernels)
        # (Triton launches through the driver's cuLaunchKernelEx)
        out["launches"] = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel",
                                                                    "cudaLaunchKernelExC", "cuLaunchKernelEx"))
        # a replayed CUDA graph (the graphed step) is one launch from the host for all of its kernels
        out["graph_launches"] = sum(e.count for e in events if e.key in ("cudaGraphLaunch", "cuGraphLaunch"))
        busy_us = sum(e.device_time for e in kernels)  # microseconds of kernel execution
        out["kernel_names"] = kernel_names(kernels)
        out["gpu_busy_share"] = busy_us / 1e6 / wall
        out["profiled_wall_s"] = wall
    return out


KERNEL_NAME_CHARS = 90  # a CUDA kernel's name (often a long C++ template) is cut to this many characters


def kernel_names(kernels, top: int = 40) -> list[dict]:
    """Where a profile's CUDA kernels are: the ``top`` most launched names (cut to :data:`KERNEL_NAME_CHARS`),
    each with its count and its microseconds on the GPU, most launched first. Which library call or generated
    kernel makes up a step's count is what the next cut of kernels a batch needs to know (issue #32)."""
    count: collections.Counter[str] = collections.Counter()
    busy: collections.Counter[str] = collections.Counter()
    for e in kernels:
        name = e.name[:KERNEL_NAME_CHARS]
        count[name] += 1
        busy[name] += e.device_time
    return [{"name": name, "count": n, "us": round(busy[name], 1)} for name, n in count.most_common(top)]


def part_ops(args, train, device: str) -> dict:
    """Aten operations of the parts of one float32 training batch (same problems): building the
    Batch, the encoder's forward and backward, the whole loss's forward and backward."""
    from solvers.vocab import build_encoding

    problems = train[:args.batch_size]
    encoding = build_encoding(problems, min_count=2)
    model = solver_for(args, device).build_model(encoding).to(device).train()
    batch = encoding.batch(problems).to(device)

    def encoder():
        states, problem = model.encoder(batch.tokens, batch.lengths)
        (states.sum() + problem.sum()).backward()

    parts = {"batch_building": lambda: encoding.batch(problems), "encoder_fwd_bwd": encoder,
             "loss_fwd_bwd": lambda: model.loss(batch).backward()}
    out = {}
    for name, fn in parts.items():
        fn()  # warm-up
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
        out[name] = sum(e.count for e in prof.key_averages() if e.key.startswith("aten::"))
    out["decoder_fwd_bwd"] = out["loss_fwd_bwd"] - out["encoder_fwd_bwd"]
    return out
