"""The decoder's padded wave pass compiled whole by torch.compile, against the hand-written pass: what each
dispatches a batch, what compiling costs, and how many compiles a training would need (issue #32).

Issue #32 asks for at most 1,500 CUDA kernels a training batch; the fewest measured, graphed-whole with its
elementwise chains fused (graph_fusion inductor), launched 2,687 on the H200 (docs/solvers.md), and by the CPU
counts the decoder's wave pass is about half of that step (836 of 1,753 dispatches): its gathers from the step
stores and their backward's scatters, the dropout masks' products, the concatenations, the products. Here that
pass (step graphed's, from the encoder's states) runs three ways on one batch, bench/gpu_speed.py's steady-step
batch (the train side's first 64 problems, its own vocabularies), at its coarse rounded shape:

- ``hand-written``: the default (StepStore, DeferredLinears, hand-written backward passes);
- ``fused``: the same inside ``fusion("inductor")`` (its elementwise chains generated kernels);
- ``compiled``: the pass in plain autograd (``WaveLoss(plain=True)``: the decoder's layers, PlainStore)
  compiled by ``torch.compile(fullgraph=True)``, forward and backward one graph each, TorchInductor generating
  the kernels between the library's products.

Per way: the first call's seconds (forward and backward; for ``compiled`` with an empty TorchInductor and
Triton cache, ``--warm-cache`` keeps the user's, and again after ``torch._dynamo.reset()`` with the cache just
filled: what a second training of the same shape pays), the median seconds of 5 calls after (not a CUDA graph's
replay), and what a call dispatches: on the CPU :func:`solvers.fusion.dispatches` (aten operations that would
launch a kernel, plus each generated kernel), on CUDA the profiler's kernels and launches. The loss and the
largest relative gradient difference of each way against ``hand-written`` (TorchInductor's ``fallback_random``
on, so that the compiled pass draws its dropout masks as the eager ones do: the same masks given the seed;
the count includes those draws as aten operations). Then, over ``--epochs`` epochs of the trainer's batches
(bench/graph_memory.py's walk), the rounded shapes and the loop structures among them: the waves W, the merge
levels before them H0, whether merges follow the waves, the repeated-value rule. torch.compile unrolls the
pass's Python loops, so each structure is a graph of its own (sizes can become symbolic; loop counts cannot):
the least number of compiles a training whose step compiled the pass whole would pay.

    .venv/bin/python bench/pass_compile.py --out docs/measurements/pass_compile_cpu.json
    .venv/bin/python bench/pass_compile.py --hidden 32 --embedding 16 --epochs 2 --backend aot_eager   # quick
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

import torch  # noqa: E402

from bench.batch_counts import profiled  # noqa: E402
from bench.gpu_speed import trained_side  # noqa: E402
from bench.graph_memory import batches_by_shape  # noqa: E402
from solvers.fusion import dispatches, fusion, fusion_unavailable  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_graphs import ShapeFixedLoss, WaveLoss  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402

BACKENDS = ("inductor", "aot_eager")
WAYS = ("hand-written", "fused", "compiled")  # the hand-written pass, the same fused, the plain pass compiled whole


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def call(loss_fn, args: tuple, model, fusion_name: str = "none") -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """One forward and backward of ``loss_fn`` (the dropout masks drawn from seed 0): the loss and the decoder's
    parameters' gradients (nothing read back to the host: a count is of the pass alone)."""
    model.zero_grad()
    torch.manual_seed(0)
    with fusion(fusion_name):
        loss = loss_fn(*args)
    loss.backward()
    return loss.detach(), {n: p.grad for n, p in model.decoder.named_parameters() if p.grad is not None}


def compiled_pass(model, backend: str):
    options = {"cpp.enable_kernel_profile": True} if backend == "inductor" else None  # C++ kernels as events
    return torch.compile(WaveLoss(model.decoder, model.cfg.any_equal_slot, plain=True), fullgraph=True,
                         backend=backend, options=options)


def way_figures(run, device: str, first_s: float, reference: tuple | None, got: tuple) -> dict:
    """A way's figures: ``run()`` is one call; ``first_s`` its first call's seconds; ``got`` its (loss, grads)."""
    seconds = []
    for _ in range(5):
        sync(device)
        t0 = time.perf_counter()
        run()
        sync(device)
        seconds.append(time.perf_counter() - t0)
    out = {"first_call_s": first_s, "step_s": statistics.median(seconds), "loss": got[0].item()}
    if device == "cuda":
        prof = profiled(run, device)
        out.update({k: prof[k] for k in ("kernels", "launches", "generated_kernels", "aten_ops")})
    else:
        counts = dispatches(run)
        out.update({"dispatches": sum(counts.values()), "generated_kernels": counts["generated"],
                    "dispatches_by_name": dict(counts.most_common(12))})
    if reference is not None:
        loss, grads = reference
        out["loss_difference"] = abs(got[0].item() - loss.item())
        out["largest_relative_gradient_difference"] = max(
            ((got[1][n] - g).abs().max() / g.abs().max().clamp_min(1e-30)).item() for n, g in grads.items())
    return out


def timed_first(run, device: str) -> tuple[float, tuple]:
    """``run()``'s seconds (on CUDA its kernels finished) and what it returned."""
    sync(device)
    t0 = time.perf_counter()
    got = run()
    sync(device)
    return time.perf_counter() - t0, got


def structures(kept, encoding, args) -> dict:
    """The rounded shapes of the decoder's pass over ``args.epochs`` epochs of the trainer's batches of ``kept``
    (problems ``encoding`` expresses), and the loop structures (W, H0, merges after the waves, the rule) among them."""
    model = GTSModel(GTSConfig(embedding_size=8, hidden_size=8), encoding)  # keys depend on the data alone
    step = ShapeFixedLoss(model, args.batch_size, torch.device("cpu"), graphed=False, rounding="coarse")
    keys = list(batches_by_shape(kept, encoding, step, args.batch_size, args.epochs)["first"])
    loops = collections.Counter((k[3], k[5], k[7] > 0, k[8]) for k in keys)
    return {"epochs": args.epochs, "shapes": len(keys), "loop_structures": len(loops),
            "shapes_by_structure": {f"W{w} H0 {h} merges_after {int(a)} rule {r}": n
                                    for (w, h, a, r), n in sorted(loops.items())}}


@torch._inductor.config.patch(fallback_random=True)  # the compiled pass draws its dropout masks as the eager ones
def measure(train, args, device: str) -> dict:
    """The ways of ``args.ways`` on the decoder's pass of ``train``'s first ``args.batch_size`` problems."""
    # a fresh start: what torch.compile kept of an earlier dataset (its graphs, and the shapes it saw, which would
    # make this dataset's graph one of symbolic sizes) would change the compile this one measures
    torch._dynamo.reset()
    steady = train[:args.batch_size]
    encoding = build_encoding(steady, min_count=2)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden), encoding).to(device).train()
    shape_fixed = ShapeFixedLoss(model, args.batch_size, torch.device(device), graphed=False)
    key, pass_args = shape_fixed.padded_args(encoding.batch(steady))
    # the encoder's states as leaves that take gradients (the graphed step's pass hands them to the encoder)
    pass_args = tuple(a.detach().requires_grad_(a.requires_grad) for a in pass_args)
    report: dict = {"shape": list(key), "ways": {}}
    hand = shape_fixed.loss_module()

    first_s, reference = timed_first(lambda: call(hand, pass_args, model), device)
    report["ways"]["hand-written"] = way_figures(lambda: call(hand, pass_args, model), device, first_s, None,
                                                 reference)
    why = fusion_unavailable(torch.device(device))
    if "fused" in args.ways:
        if why is None:
            first_s, got = timed_first(lambda: call(hand, pass_args, model, "inductor"), device)
            report["ways"]["fused"] = way_figures(lambda: call(hand, pass_args, model, "inductor"), device,
                                                  first_s, reference, got)
        else:
            report["ways"]["fused"] = {"skipped": why}
    if "compiled" not in args.ways:
        return report
    if args.backend == "inductor" and why is not None:
        report["ways"]["compiled"] = {"skipped": why}
        return report
    compiled = compiled_pass(model, args.backend)
    first_s, got = timed_first(lambda: call(compiled, pass_args, model), device)
    figures = way_figures(lambda: call(compiled, pass_args, model), device, first_s, reference, got)
    torch._dynamo.reset()  # traced again, compiled from the cache just filled: a later training's first call
    compiled = compiled_pass(model, args.backend)
    figures["warm_cache_first_call_s"] = timed_first(lambda: call(compiled, pass_args, model), device)[0]
    report["ways"]["compiled"] = figures
    return report


def line(name: str, way: dict) -> str:
    if "skipped" in way:
        return f"    {name}: skipped ({way['skipped']})"
    count = (f"{way['kernels']} kernels ({way['generated_kernels']} generated), {way['launches']} launches"
             if "kernels" in way else f"{way['dispatches']} dispatches ({way['generated_kernels']} generated)")
    text = f"    {name}: {count}; first call {way['first_call_s']:.1f} s, then {way['step_s'] * 1e3:.1f} ms a call"
    if "warm_cache_first_call_s" in way:
        text += f" (first call with the cache filled {way['warm_cache_first_call_s']:.1f} s)"
    if "loss_difference" in way:
        text += (f"; loss {way['loss']:.4f} (off by {way['loss_difference']:.1e}), gradients off by at most "
                 f"{way['largest_relative_gradient_difference']:.1e} relative")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="mawps")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=80, help="epochs of the trainer's batches walked for the shapes")
    ap.add_argument("--ways", default=",".join(WAYS), help=f"which of {', '.join(WAYS)} (hand-written always)")
    ap.add_argument("--backend", default="inductor", choices=BACKENDS,
                    help="torch.compile's backend for the compiled pass (aot_eager: traced, no code generated)")
    ap.add_argument("--warm-cache", action="store_true",
                    help="keep the user's TorchInductor and Triton caches (default: an empty one, the cold cost)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    args.ways = args.ways.split(",")
    unknown = set(args.ways) - set(WAYS)
    if unknown:
        ap.error(f"unknown ways {sorted(unknown)}: choose from {', '.join(WAYS)}")
    torch.set_num_threads(args.threads)
    cache = None
    if not args.warm_cache:
        cache = tempfile.TemporaryDirectory(prefix="pass_compile_cache_")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache.name
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache.name, "triton")
    report: dict = {"torch": torch.__version__, "device": args.device, "args": vars(args), "datasets": {}}
    if args.device == "cuda":
        report["gpu"] = torch.cuda.get_device_name()
    try:
        for dataset in args.datasets.split(","):
            print(f"{dataset}: the decoder's pass on gpu_speed's steady batch ({args.device}, hidden {args.hidden})",
                  flush=True)
            train, encoding, kept = trained_side(dataset)
            figures = measure(train, args, args.device)
            print(f"  shape {figures['shape']}", flush=True)
            for name, way in figures["ways"].items():
                print(line(name, way), flush=True)
            if args.epochs:
                figures["structures"] = structures(kept, encoding, args)
                s = figures["structures"]
                print(f"  over {s['epochs']} epochs of the trainer's batches: {s['shapes']} rounded shapes, "
                      f"{s['loop_structures']} loop structures (a compile each at least)", flush=True)
            report["datasets"][dataset] = figures
    finally:
        if cache is not None:
            cache.cleanup()
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
