"""Teacher forcing by tree waves against by prefix positions (GTSConfig.teacher_pass), counted on the CPU.

Per dataset (the trainer's length-bucketed batches of one epoch, seed 0, batch 64, on bench/gpu_speed.py's 80/20
split): the decoder's sequential steps an epoch (positions: each batch's longest target; waves: the wave plan's,
with and without the repeated-value rule), the host's planning seconds an epoch for each pass (the smallest of
``--repeats`` timings a batch; "padded waves": the plan and rounded shape of the graphed steps' padded wave pass,
solvers/gts_wave_graph.py), and for the first ``--op-batches`` batches the aten operations of the decoder's
pass, forward and backward, at paper size (the encoder's states given, so the count is the decoder's alone:
what differs between the passes), and those of the padded passes a graphed step captures (the padded wave pass
and the dense one, each at its rounded shape). Counts do not depend on the machine; the seconds do.

With ``--epoch-pairs N`` it then times whole training epochs of paper-size GTS on MAWPS's train side in this one
process, the two passes alternated N times (2 epochs each fit, fp32, seed 0): a side-by-side figure of the CPU.

    .venv/bin/python bench/teacher_waves.py --out docs/measurements/teacher_waves.json
    .venv/bin/python bench/teacher_waves.py --datasets mawps --op-batches 0 --epoch-pairs 2   # CPU epochs
    .venv/bin/python bench/teacher_waves.py --datasets mawps --op-batches 1 --hidden 32 --embedding 16   # quick
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
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench.gpu_speed import DATA, split, trained_side  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_decoder import DecoderContext  # noqa: E402
from solvers.gts_graphs import ShapeFixedLoss  # noqa: E402
from solvers.gts_plan import step_rows  # noqa: E402
from solvers.gts_teacher import repeated_value_leaves, teacher_forced_log_probs  # noqa: E402
from solvers.gts_waves import wave_log_probs, wave_plan  # noqa: E402
from solvers.registry import build_solver  # noqa: E402
from solvers.trainer import length_bucketed  # noqa: E402

PASSES = {"positions": teacher_forced_log_probs, "waves": wave_log_probs}


def fastest(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def aten_ops(run) -> int:
    """Aten operations ``run()`` dispatches (its forward and backward)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return sum(e.count for e in prof.key_averages() if e.key.startswith("aten::"))


def decoder_ops(model: GTSModel, batch, rows: int) -> dict:
    """Aten operations of each pass's forward and backward on one batch, from the same encoder states; and of the
    padded pass a graphed step captures for each teacher pass ("padded-waves", its shapes rounded coarsely, the
    default, and "padded-waves-fine"; "dense"), on the batch padded to its rounded shape (``rows`` rows), from
    the padded batch's states: what a replay runs."""
    with torch.no_grad():
        states = model.context(batch)
    qty_class = batch.qty_class if batch.has_repeated_values else None
    out = {}
    for name, pass_ in PASSES.items():
        ctx = DecoderContext(*(t.detach().requires_grad_(t.is_floating_point() and t is not states.text_bias)
                               for t in states._fields()))
        model.zero_grad()
        out[name] = aten_ops(lambda: (-pass_(model.decoder, ctx, batch.target, batch.target_mask,
                                             qty_class).sum()).backward())
    for name, teacher_pass, rounding in (("padded-waves", "waves", "coarse"), ("padded-waves-fine", "waves", "fine"),
                                         ("dense", "positions", "coarse")):
        step = ShapeFixedLoss(model, rows, torch.device("cpu"), graphed=False, teacher_pass=teacher_pass,
                              rounding=rounding)
        key, args = step.padded_args(batch)
        args = tuple(a.detach().requires_grad_(a.requires_grad) for a in args)
        loss = step.loss_module()
        model.zero_grad()
        out[name] = aten_ops(lambda: loss(*args).backward())
        out[name + "_shape"] = list(key)
    return out


def epoch_pairs(args) -> dict:
    """Training epochs of each pass, fits alternated in this process (paper size unless --hidden says otherwise)."""
    train, _ = split(list(load_dataset("mawps", DATA["mawps"]).problems))
    config = TrainConfig(epochs=2, batch_size=args.batch_size, progress=False, device="cpu", precision="fp32",
                         eval_every=10**9, seed=0)
    seconds: dict = {name: [] for name in PASSES}
    for i in range(args.epoch_pairs):
        for name in PASSES:
            solver = build_solver("gts", device="cpu", embedding_size=args.embedding, hidden_size=args.hidden,
                                  teacher_pass=name)
            seconds[name] += [e.seconds for e in solver.fit(train, [], config).epochs]
            print(f"  pair {i}: {name} epochs {[round(s, 2) for s in seconds[name][-2:]]} s", flush=True)
    for name, values in seconds.items():
        print(f"MAWPS epoch on the CPU ({len(train)} problems, {args.threads} threads), {name}: median "
              f"{statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})", flush=True)
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="mawps,math23k")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3, help="timings of each batch's plan (the smallest is kept)")
    ap.add_argument("--op-batches", type=int, default=3, help="batches whose decoder operations are counted")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epoch-pairs", type=int, default=0, help="then time 2-epoch MAWPS fits of each pass, alternated")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    report: dict = {"torch": torch.__version__, "args": vars(args), "datasets": {}}
    for name in args.datasets.split(","):
        train, encoding, kept = trained_side(name)
        torch.manual_seed(0)
        model = GTSModel(GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden, dropout=0.0),
                         encoding).train()
        n_ops = model.decoder.n_ops
        first_quantity = n_ops + model.decoder.n_constants
        row = {"batches": 0, "positions": 0, "waves": 0, "waves_without_rule": 0, "plan_s_positions": 0.0,
               "plan_s_waves": 0.0, "plan_s_padded_waves": 0.0, "decoder_ops": []}
        padded_step = ShapeFixedLoss(model, args.batch_size, torch.device("cpu"), graphed=False, teacher_pass="waves")
        for chunk in length_bucketed(kept, args.batch_size, random.Random(0)):
            batch = encoding.batch(chunk)
            L = batch.target.shape[1]
            lengths = batch.target_mask.sum(1).tolist()
            targets = [ids[:n] for ids, n in zip(batch.target.tolist(), lengths)]
            waits = repeated_value_leaves(model.decoder, batch.target, batch.target_mask, batch.qty_class)[0].tolist()
            n_numbers = first_quantity - n_ops + batch.qty_class.shape[1]
            row["batches"] += 1
            row["positions"] += L
            n_waves = len(wave_plan(targets, n_ops, L, n_numbers, waits).waves)
            row["waves"] += n_waves
            row["waves_without_rule"] += len(wave_plan(targets, n_ops, L, n_numbers).waves)
            by_length = sorted(targets, key=len, reverse=True)  # what the positions pass plans: rows longest first
            active = [sum(1 for ids in by_length if len(ids) > t) for t in range(L)]
            row["plan_s_positions"] += fastest(lambda: step_rows(by_length, n_ops, L, active), args.repeats)
            row["plan_s_waves"] += fastest(lambda: wave_plan(targets, n_ops, L, n_numbers, waits), args.repeats)
            row["plan_s_padded_waves"] += fastest(lambda: padded_step.key_and_plan(batch), args.repeats)
            if len(row["decoder_ops"]) < args.op_batches:
                ops = decoder_ops(model, batch, args.batch_size)
                row["decoder_ops"].append({"target_length": L, "n_waves": n_waves, "ops_positions": ops["positions"],
                                           "ops_waves": ops["waves"], "ops_padded_waves": ops["padded-waves"],
                                           "padded_waves_shape": ops["padded-waves_shape"],
                                           "ops_padded_waves_fine": ops["padded-waves-fine"],
                                           "padded_waves_fine_shape": ops["padded-waves-fine_shape"],
                                           "ops_dense": ops["dense"], "dense_shape": ops["dense_shape"]})
        report["datasets"][name] = row
        print(f"{name}: {row['batches']} batches an epoch; sequential decoder steps: positions {row['positions']}, "
              f"waves {row['waves']} ({row['waves_without_rule']} without the repeated-value rule); host planning "
              f"an epoch: positions {row['plan_s_positions']:.3f} s, waves {row['plan_s_waves']:.3f} s, padded waves "
              f"{row['plan_s_padded_waves']:.3f} s", flush=True)
        for i, ops in enumerate(row["decoder_ops"]):
            print(f"  batch {i} (longest target {ops['target_length']}, {ops['n_waves']} waves): the decoder's forward "
                  f"and backward, aten ops: positions {ops['ops_positions']}, waves {ops['ops_waves']}; padded as "
                  f"a graphed step captures it: waves {ops['ops_padded_waves']} (shape {ops['padded_waves_shape']}; "
                  f"rounded fine {ops['ops_padded_waves_fine']}, shape {ops['padded_waves_fine_shape']}), "
                  f"dense {ops['ops_dense']} (shape {ops['dense_shape']})", flush=True)
    if args.epoch_pairs:
        report["epoch_seconds"] = epoch_pairs(args)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
