"""What fusing the graphed steps' elementwise chains (TrainConfig.graph_fusion "inductor", solvers/fusion.py)
changes in what their captured pass dispatches, counted on the CPU.

Per dataset (bench/gpu_speed.py's 80/20 split, the trainer's length-bucketed batches of one epoch, seed 0, batch
64, paper size unless --hidden says otherwise) and for the first ``--batches`` batches, after the batch
bench/gpu_speed.py's steady step profiles (the train side's first 64 problems, whose CUDA kernels the H200 runs
counted: the figure to set this one against): the padded pass each
graphed step captures, forward and backward, at the batch's rounded shape (step graphed: the decoder's padded
wave pass from the encoder's states; graphed-whole: the encoder's and the decoder's), with fusion none and
inductor. Counted per batch: what would launch a GPU kernel (solvers.fusion.dispatches: aten operations called
from outside another one, less views and allocations, plus each generated kernel run), and how many of those are
generated kernels. The same batch's loss both ways, as a check that the fused pass computes the same thing
(float32: rounding apart). The counts do not depend on the machine. On the CPU TorchInductor writes C++ loops,
which may split a chain Triton would run as one kernel: a CUDA profile (bench/gpu_speed.py) is the figure that
counts; this is the one a CPU gives.

    .venv/bin/python bench/fusion_ops.py --out docs/measurements/fusion_ops.json
    .venv/bin/python bench/fusion_ops.py --datasets mawps --batches 2 --hidden 32 --embedding 16   # quick
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

import torch  # noqa: E402

from bench.gpu_speed import trained_side  # noqa: E402
from solvers.base import BUCKETINGS, GRAPH_FUSIONS, GRAPHED_STEPS  # noqa: E402
from solvers.fusion import dispatches, fusion  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_graphs import ShapeFixedLoss  # noqa: E402
from solvers.trainer import length_bucketed  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402


def pass_counts(model: GTSModel, batch, rows: int, step: str, name: str) -> dict:
    """One batch's padded pass of ``step`` with fusion ``name``: its dispatches forward and backward (after a run
    that compiles), the loss, and the first run's seconds (with inductor: the compilations it needed)."""
    shape_fixed = ShapeFixedLoss(model, rows, torch.device("cpu"), graphed=False, whole=step == "graphed-whole",
                                 fusion=name)
    torch.manual_seed(0)  # the encoder's dropout (step graphed runs it here) the same each way
    key, args = shape_fixed.padded_args(batch)
    args = tuple(a.detach().requires_grad_(a.requires_grad) for a in args)
    loss_pass = shape_fixed.loss_module()

    def run() -> float:
        model.zero_grad()
        torch.manual_seed(0)  # the same dropout masks each way
        with fusion(name):
            loss = loss_pass(*args)
        loss.backward()  # the backward follows its forward's fusion
        return loss.item()

    t0 = time.perf_counter()
    loss = run()
    first_s = time.perf_counter() - t0
    counts = dispatches(run)
    return {"shape": list(key), "dispatches": sum(counts.values()), "generated": counts["generated"], "loss": loss,
            "first_run_s": first_s}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="mawps,math23k")
    ap.add_argument("--batches", type=int, default=5, help="the epoch's first batches counted")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--bucketing", default="length", choices=BUCKETINGS,
                    help="how the trainer's batches are made (TrainConfig.bucketing)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    report: dict = {"torch": torch.__version__, "args": vars(args), "datasets": {}}
    for dataset in args.datasets.split(","):
        train, encoding, kept = trained_side(dataset)
        torch.manual_seed(0)
        model = GTSModel(GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden), encoding).train()
        print(f"{dataset}: {len(kept)} training problems", flush=True)
        # gpu_speed's steady-step batch first (its own vocabularies, as there), then the trainer's batches
        steady = train[:args.batch_size]
        steady_encoding = build_encoding(steady, min_count=2)
        torch.manual_seed(0)
        steady_model = GTSModel(GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden),
                                steady_encoding).train()
        report["datasets"][dataset] = {"gpu_speed_steady_batch": {
            step: {name: pass_counts(steady_model, steady_encoding.batch(steady), args.batch_size, step, name)
                   for name in GRAPH_FUSIONS} for step in GRAPHED_STEPS}}
        for step, row in report["datasets"][dataset]["gpu_speed_steady_batch"].items():
            print(f"  gpu_speed's steady-step batch, {step} shape {row['none']['shape']}: "
                  f"{row['none']['dispatches']} dispatches unfused, {row['inductor']['dispatches']} fused "
                  f"({row['inductor']['dispatches'] / row['none']['dispatches']:.2f}x)", flush=True)
        steps = model.decoder_steps(encoding, kept) if args.bucketing == "steps" else None
        chunks = list(length_bucketed(kept, args.batch_size, random.Random(0), steps))[:args.batches]
        rows = report["datasets"][dataset]["trainer_batches"] = {step: [] for step in GRAPHED_STEPS}
        print(f"  the trainer's first {len(chunks)} batches (bucketing {args.bucketing})", flush=True)
        for i, chunk in enumerate(chunks):
            batch = encoding.batch(chunk)
            for step in GRAPHED_STEPS:
                row = {name: pass_counts(model, batch, args.batch_size, step, name) for name in GRAPH_FUSIONS}
                rows[step].append(row)
                plain, fused = row["none"], row["inductor"]
                print(f"  batch {i} {step} shape {plain['shape']}: {plain['dispatches']} dispatches unfused, "
                      f"{fused['dispatches']} fused ({fused['generated']} of them generated kernels), "
                      f"{fused['dispatches'] / plain['dispatches']:.2f}x; loss {plain['loss']:.6f} / "
                      f"{fused['loss']:.6f}; first fused run {fused['first_run_s']:.1f} s", flush=True)
        for step in GRAPHED_STEPS:
            plain = [r["none"]["dispatches"] for r in rows[step]]
            fused = [r["inductor"]["dispatches"] for r in rows[step]]
            print(f"  {dataset} {step}: median {statistics.median(plain):.0f} dispatches a batch unfused, "
                  f"{statistics.median(fused):.0f} fused (range {min(fused)}-{max(fused)} against "
                  f"{min(plain)}-{max(plain)}; mean {statistics.mean(plain):.0f} and {statistics.mean(fused):.0f})",
                  flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
