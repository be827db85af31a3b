"""Does a GTS training step captured as a CUDA graph beat the eager step? The experiment behind issue #32's
kernel and epoch targets (docs/solvers.md, "Not done / open"), ready for a lent GPU.

On one training batch of paper-size GTS (MAWPS, seed 0's train side, batch 64), forward and backward of
the loss, three ways, each timed over ``--steps`` repetitions after a warm-up and profiled once:
1. ``rowwise``: the trainer's pass (solvers/gts_teacher.py), eager;
2. ``dense``: the shape-fixed pass (solvers/gts_dense.py), eager;
3. ``graphed`` (CUDA only): the encoder eager, the dense decoder pass captured with
   ``torch.cuda.make_graphed_callables`` (one forward graph, one backward graph) and replayed; the seconds
   the capture took are printed apart.
With dropout off it checks that the three give the same loss and gradients (largest differences printed).
It also counts, over ``--epochs`` epochs of the trainer's shuffled length buckets on the whole train side
(host only), the distinct batch shapes (T, L, Q, K) a graph per shape would capture, exact and rounded up
(T to 16, L and Q to 4, K to 2), and trains ``--train-epochs`` epochs both ways from the same weights: the
trainer's step, and the dense pass on batches padded to their rounded shape through a graph a shape (on
the CPU eagerly, a check of the machinery).

    .venv/bin/python bench/dense_graph.py --device cpu --hidden 16 --embedding 8 --steps 2   # the machinery
    python bench/dense_graph.py --device cuda --out dense_graph.json                        # on a GPU
"""
from __future__ import annotations

import argparse
import json
import random
from dataclasses import replace
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench.batch_counts import counted  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_dense import dense_log_probs, plan_of_targets  # noqa: E402
from solvers.gts_graphs import DenseLoss, dense_args, rounded_plan  # noqa: E402
from solvers.gts_teacher import tree_loss  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.trainer import float32_products, length_bucketed, make_optimizer, shape_fixed_loss, train_step  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402

MAWPS = ROOT.parent / "shared/data/mawps/MAWPS.json"


def shapes(train, encoding, n_ops: int, batch_size: int, epochs: int) -> dict:
    """Distinct (T, L, Q, K) of the trainer's batches over ``epochs`` epochs, exact and rounded up."""
    exact, rounded = set(), set()
    rng = random.Random(0)
    for _ in range(epochs):
        for chunk in length_bucketed(train, batch_size, rng):
            batch = encoding.batch(chunk)
            levels = plan_of_targets(batch.target, batch.target_mask, n_ops).levels
            exact.add((batch.tokens.shape[1], batch.target.shape[1], batch.qty_positions.shape[1], levels))
            rounded.add(rounded_plan(batch, n_ops)[0])
    return {"epochs": epochs, "exact": len(exact), "rounded": len(rounded)}


def epochs_compared(model, encoding, train, cfg, args, device) -> dict:
    """``--train-epochs`` epochs of training on the whole train side from the same weights, twice: the
    trainer's own step (``train_step``, row-wise pass), and the step with the dense pass on batches padded
    to their rounded shape, on CUDA through one captured graph a shape (captured the first time a shape
    comes; the capture's seconds are counted in its epoch and reported apart), on the CPU eager (a check of
    the machinery). Seconds an epoch (the dense way's include building each batch's plan on the host),
    mean batch loss, captures, peak GPU memory."""
    cuda = device.type == "cuda"
    out = {}
    start = {k: v.clone() for k, v in model.state_dict().items()}
    for way in ("rowwise", "graphed" if cuda else "dense"):
        config = TrainConfig(batch_size=args.batch_size, device=device.type, precision="fp32", progress=False,
                             step=way)
        torch.manual_seed(0)
        model.load_state_dict(start)
        model.train()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        optimizer = make_optimizer(model, config, device)
        scaler = torch.amp.GradScaler(device.type, enabled=False)
        loss_of = shape_fixed_loss(model, config, device, None)  # the trainer's own: solvers/gts_graphs.py
        rng, epochs = random.Random(0), []
        for _ in range(args.train_epochs):
            if cuda:
                torch.cuda.synchronize()
            t0, total, n = time.perf_counter(), 0.0, 0
            for chunk in length_bucketed(train, args.batch_size, rng):
                batch = encoding.batch(chunk)
                loss = train_step(model, batch if loss_of else batch.to(device), config, optimizer, scaler, device,
                                  None, loss_of)
                total, n = total + loss.item(), n + 1
            if cuda:
                torch.cuda.synchronize()
            epochs.append({"seconds": time.perf_counter() - t0, "loss": total / n})
        graphs, capture_s = (loss_of.captures, loss_of.capture_seconds) if loss_of else (0, 0.0)
        out[way] = {"epochs": epochs, "captures": graphs, "capture_s": capture_s}
        if cuda:  # the graphs of the agreement and speed checks above are still held
            out[way]["peak_gpu_mb"] = torch.cuda.max_memory_allocated() / 2**20
        print(f"  training, {way}: " + ", ".join(f"epoch {i + 1} {e['seconds']:.2f} s (loss {e['loss']:.3f})"
                                                 for i, e in enumerate(epochs))
              + (f"; {graphs} captures, {capture_s:.1f} s of them" if graphs else ""), flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--data", default=str(MAWPS))
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20, help="timed repetitions of each way")
    ap.add_argument("--epochs", type=int, default=80, help="epochs whose batch shapes are counted")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--train-epochs", type=int, default=2,
                    help="epochs of training on the whole train side, each way (0: none)")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    problems = list(load_dataset("mawps", args.data).problems)
    random.Random(0).shuffle(problems)
    train = problems[len(problems) // 5:]
    encoding = build_encoding(train, min_count=2)
    torch.manual_seed(0)
    cfg = GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden)
    model = GTSModel(cfg, encoding).to(device).train()
    n_ops = model.decoder.n_ops
    batch_problems = next(length_bucketed(train, args.batch_size, random.Random(0)))
    batch = encoding.batch(batch_problems).to(device)
    plan = plan_of_targets(batch.target, batch.target_mask, n_ops).to(device)
    report: dict = {"device": str(device), "gpu": torch.cuda.get_device_name() if cuda else "none",
                    "torch": torch.__version__, "args": vars(args),
                    "batch": {"T": batch.tokens.shape[1], "L": batch.target.shape[1], "K": plan.levels}}
    print(f"device {device} ({report['gpu']}); batch T {report['batch']['T']}, L {report['batch']['L']}, "
          f"K {report['batch']['K']}", flush=True)
    def ways_for(model) -> dict:
        """fwd+bwd of the batch's summed loss, each way, for ``model``; on CUDA its dense decoder captured."""
        qty = batch.qty_class if cfg.any_equal_slot else None

        def rowwise():
            loss = tree_loss(model.decoder, model.context(batch), batch, cfg.any_equal_slot) * batch.target_mask.sum()
            loss.backward()
            return loss

        def dense():
            ctx = model.context(batch)
            loss = -dense_log_probs(model.decoder, ctx, batch.target, batch.target_mask, qty, plan).sum()
            loss.backward()
            return loss

        ways = {"rowwise": rowwise, "dense": dense}
        if cuda:
            ctx = model.context(batch)
            sample = tuple(t.detach().requires_grad_(t.requires_grad) for t in dense_args(ctx, batch, plan))
            t0 = time.perf_counter()
            # the layers the context applies (attn_enc, score_num, the constants) are not used inside the pass:
            # their gradients come through the context's tensors, outside the graph
            graphed = torch.cuda.make_graphed_callables(DenseLoss(model.decoder), sample, allow_unused_input=True)
            sync()
            report["capture_s"] = time.perf_counter() - t0

            def graphed_step():
                loss = graphed(*dense_args(model.context(batch), batch, plan))
                loss.backward()
                return loss

            ways["graphed"] = graphed_step
        return ways

    with float32_products(cuda):
        # the same loss and gradients, with dropout off (a copy of the model: a graph keeps the dropout it was
        # captured with)
        plain = GTSModel(replace(cfg, dropout=0.0), encoding).to(device).train()
        plain.load_state_dict(model.state_dict())
        results = {}
        for name, way in ways_for(plain).items():
            plain.zero_grad(set_to_none=True)
            loss = way()
            sync()
            results[name] = (loss.item(), {n: q.grad.clone() for n, q in plain.named_parameters() if q.grad is not None})
        base_loss, base_grads = results["rowwise"]
        for name, (loss, grads) in results.items():
            worst = max(((g - base_grads[n]).abs().max() / base_grads[n].abs().max().clamp_min(1e-30)).item()
                        for n, g in grads.items())
            report.setdefault("agreement", {})[name] = {"loss": loss, "loss_diff": abs(loss - base_loss),
                                                        "worst_relative_grad_diff": worst}
            print(f"  dropout off, {name}: loss {loss:.6f} (|diff| {abs(loss - base_loss):.2e}), worst relative "
                  f"gradient difference {worst:.2e}", flush=True)
        # speed: each way's fwd+bwd on the batch, dropout on
        for name, way in ways_for(model).items():
            if name == "graphed":
                print(f"  capture of the dense decoder pass: {report['capture_s']:.2f} s", flush=True)
            for _ in range(3):
                model.zero_grad(set_to_none=True)
                way()
            sync()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                model.zero_grad(set_to_none=True)
                way()
            sync()
            ms = 1000 * (time.perf_counter() - t0) / args.steps
            activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
            t0 = time.perf_counter()
            with profile(activities=activities) as prof:
                model.zero_grad(set_to_none=True)
                way()
                sync()
            row = {"ms_a_step": ms, **counted(prof, device.type, time.perf_counter() - t0)}  # gpu_speed's counts
            report.setdefault("ways", {})[name] = row
            print(f"  {name}: {ms:.1f} ms a step (fwd+bwd of the loss), {row['aten_ops']} aten ops"
                  + (f", {row['kernels']} kernels" if cuda else ""), flush=True)
    report["shapes"] = shapes(train, encoding, n_ops, args.batch_size, args.epochs)
    print(f"batch shapes (T, L, Q, K) over {args.epochs} epochs: {report['shapes']['exact']} distinct, "
          f"{report['shapes']['rounded']} with T, L, Q, K rounded up to 16, 4, 4, 2", flush=True)
    if args.train_epochs:
        with float32_products(cuda):  # fp32 as the trainer runs it on CUDA: no TF32
            report["training"] = epochs_compared(model, encoding, train, cfg, args, device)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
