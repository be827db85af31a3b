"""Paper-size GTS (embedding 128, hidden 512, batch 64) on a GPU, or on the CPU: how fast, and how
many operations a training batch dispatches.

Per dataset (MAWPS, Math23K; 80/20 train/test split, seed 0) and precision (fp32, bf16):
- seconds per training epoch (the first epoch apart: it includes warm-up) and milliseconds a problem;
- aten operations dispatched by one training batch of 64 (a one-epoch fit on 64 training problems,
  every aten event of the torch profiler: ../shared/tools/ops_per_batch.py's count), a figure the CPU
  gives as well as the GPU;
- the same count for one training step in steady state (after three steps of a built model and
  optimizer: no model building, no first-step allocations), what every later batch costs; on CUDA also
  how many times that step makes the host wait for the GPU, and where (torch's sync debug mode);
- on CUDA also: GPU kernels launched by that batch, the share of its wall time the GPU spent in
  kernels, peak GPU memory of the timed training, batched beam-5 inference (problems/s on the test
  side) and candidate scoring (teacher-forced likelihood, problems/s on the train side);
- with ``--epoch-batches N``: the same counts for each of the trainer's first N batches of an epoch (its order and
  bucketing, the vocabularies of the whole train side), each step profiled alone after a first pass over them took
  it (a graphed step's shapes captured there): issue #32's figure a batch as it first measured it (a profile of 5
  training batches), where the steady step is one fixed batch;
- with ``--reference-epochs N``: the public GTS (``../shared/reference-gts``, GPL-3, a separate
  process, never imported) trained N epochs on the same train side on the same device, first (so a run cut by
  its time limit still has its baseline), and each step's ratio of milliseconds a problem as the step finishes
  (its epochs after the first, medians);
- with ``--steps rowwise,graphed``: every figure again for the training step that replays the decoder's
  pass as one CUDA graph a padded batch shape (solvers/gts_graphs.py; fp32 only), keyed ``fp32-graphed``;
  ``graphed-whole`` likewise for the step that replays the encoder in that graph too (``fp32-graphed-whole``);
- with ``--teacher-passes waves,positions``: the row-wise step with teacher forcing by tree waves (the default,
  solvers/gts_waves.py) and by prefix positions (the pass before 2026-11-27), keyed ``fp32`` and ``fp32-positions``;
  a step given as ``graphed:positions`` captures the dense pass (by prefix positions, the pass the H200 runs of
  2026-11-27 captured) instead of the padded wave pass (solvers/gts_wave_graph.py), keyed ``fp32-graphed-positions``.

    .venv/bin/python bench/gpu_speed.py --device cpu --datasets mawps --precisions fp32 --epochs 1
    .venv/bin/python bench/gpu_speed.py --device cuda --epochs 3 --reference-epochs 3 --out gpu.json
    python bench/gpu_speed.py --device cuda --datasets mawps --precisions fp32 --steps rowwise,graphed --epochs 3

``--out`` is written again after the baseline and after each step, so a run its caller's time limit ends keeps
every figure it printed (the GPU sessions run under one).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
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

from mwp.readers import load_dataset  # noqa: E402

from bench.batch_counts import (FP32, OPS_TARGET, Run, epoch_counts, epoch_line, ops_per_batch,  # noqa: E402
                                part_ops, solver_for, steady_step)
from solvers.base import BUCKETINGS, GRAPH_FUSIONS, GRAPH_ROUNDINGS, GRAPHED_STEPS  # noqa: E402
from solvers.gts_decoder import check_teacher_pass  # noqa: E402

DATA = {"mawps": ROOT.parent / "shared/data/mawps/MAWPS.json", "math23k": ROOT.parent / "shared/data/math23k/math23k.json"}
# Runs the reference driver with every tensor it creates on CUDA: its driver builds the models on
# the CPU while the public training code moves the inputs to CUDA whenever a GPU is present.
ON_CUDA = ("import runpy, sys, torch; torch.set_default_device('cuda'); sys.argv = sys.argv[1:]; "
           "runpy.run_path(sys.argv[0], run_name='__main__')")




def collection_seconds() -> float:
    """Seconds of a full cycle collection of this process as it stands (its datasets loaded): what every capture
    of a graphed step paid before the training's later captures stopped collecting (solvers/gts_graphs.py)."""
    gc.collect()
    t0 = time.perf_counter()
    gc.collect()
    return time.perf_counter() - t0


def split(problems, seed: int = 0, test_fraction: float = 0.2):
    order = list(problems)
    random.Random(seed).shuffle(order)
    n_test = round(len(order) * test_fraction)
    return order[n_test:], order[:n_test]


def trained_side(name: str):
    """A dataset's train side (:func:`split`, seed 0), its GTS vocabularies and the problems they express: what the
    trainer would batch (bench/teacher_waves.py and bench/fusion_ops.py count its batches)."""
    from solvers.gts import GTSConfig
    from solvers.trainer import expressible
    from solvers.vocab import build_encoding

    train, _ = split(list(load_dataset(name, DATA[name]).problems))
    encoding = build_encoding(train, min_count=GTSConfig.min_count)
    return train, encoding, [p for p in train if expressible(encoding, p)]


def timed_training(args, train, test, device: str, run: Run = FP32) -> dict:
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    solver = solver_for(args, device, run.teacher_pass)
    cfg = run.config(epochs=args.epochs, batch_size=args.batch_size, progress=False, device=device, eval_every=10**9,
                     seed=args.seed)
    result = solver.fit(train, [], cfg)
    seconds = [e.seconds for e in result.epochs]
    steady = seconds[1:] or seconds
    out = {"precision_ran": result.precision, "epoch_seconds": seconds, "epoch_s": statistics.median(steady),
           "ms_per_problem": 1000 * statistics.median(steady) / len(train), "training_s": sum(seconds)}
    out.update(capture_figures(result.epochs, len(train)))
    if device == "cuda":
        out["peak_gpu_mb"] = torch.cuda.max_memory_allocated() / 2**20
    t0 = time.perf_counter()
    solver.predict(test, beam_size=5, batch_size=args.batch_size)
    out["beam5_problems_s"] = len(test) / (time.perf_counter() - t0)
    scored = train[:2000]
    t0 = time.perf_counter()
    solver.log_likelihood(scored, batch_size=256)
    out["scoring_problems_s"] = len(scored) / (time.perf_counter() - t0)
    return out


def capture_figures(epochs, n_train: int) -> dict:
    """For a training that captured CUDA graphs (the graphed step; none otherwise): shapes captured and their
    seconds, epoch by epoch, and an epoch once every shape has been captured, as a long training's epochs
    are: the median of the epochs after the first (of the only one if one ran), less their captures' seconds."""
    if not epochs or epochs[0].captures is None:
        return {}
    replayed = [e.seconds - e.capture_seconds for e in epochs]
    epoch_s = statistics.median(replayed[1:] or replayed)
    return {"captures": [e.captures for e in epochs], "capture_seconds": [e.capture_seconds for e in epochs],
            "epoch_s_without_captures": epoch_s, "ms_per_problem_without_captures": 1000 * epoch_s / n_train}


def capture_line(label: str, row: dict) -> str:
    return (f"  {label} captures an epoch {row['captures']} taking {[round(s, 2) for s in row['capture_seconds']]} s; "
            f"epoch without them {row['epoch_s_without_captures']:.2f} s "
            f"({row['ms_per_problem_without_captures']:.2f} ms a problem)")


def run_reference(data: Path, train, test, epochs: int, threads: int, device: str) -> dict:
    """The public GTS trained ``epochs`` on the same train side, in a separate process."""
    from solver_speed import EPOCH_LINE, reference_stdout

    # its code moves inputs to CUDA whenever one is visible: off the GPU none is
    env = {} if device == "cuda" else {"CUDA_VISIBLE_DEVICES": ""}
    stdout = reference_stdout(data, train, test, epochs, threads, env, ("-c", ON_CUDA) if device == "cuda" else ())
    epochs_seen = []
    for line in stdout.splitlines():
        print(f"  reference | {line}", flush=True)
        if m := EPOCH_LINE.match(line):
            epochs_seen.append({"seconds": float(m[2]), "ms_per_problem": float(m[4])})
    if not epochs_seen:
        raise SystemExit(f"the reference GTS printed no epoch line: {stdout[-1000:]}")
    steady = epochs_seen[1:] or epochs_seen
    return {"epochs": epochs_seen, "ms_per_problem": statistics.median(e["ms_per_problem"] for e in steady),
            "epoch_s": statistics.median(e["seconds"] for e in steady)}


def whole_training_line(name: str, label: str, row: dict, ref: dict) -> str:
    """A whole training's seconds (every epoch, captures included) against the public GTS's for as many epochs,
    which are its steady epoch times that many (its epochs are alike: no capture, no warm-up after the first);
    stored in ``row`` as ``training_vs_reference``."""
    n = len(row["epoch_seconds"])
    reference_s = ref["epoch_s"] * n
    row["training_vs_reference"] = reference_s / row["training_s"]
    return (f"  whole training ({name}, {n} epochs, captures included): compaug {label} {row['training_s']:.1f} s, "
            f"the public GTS's epoch {ref['epoch_s']:.2f} s x {n} = {reference_s:.1f} s: compaug "
            f"{row['training_vs_reference']:.2f}x")


def side_by_side_lines(name: str, device: str, label: str, row: dict, ref: dict) -> list[str]:
    """A timed step's ratios to the public GTS's epoch (``ref``), stored in ``row``: milliseconds a problem,
    a whole training (:func:`whole_training_line`) and, for a step that captures, without its captures' seconds."""
    row["speedup_vs_reference"] = ratio = ref["ms_per_problem"] / row["ms_per_problem"]
    lines = [f"  side by side ({name}, {device}): compaug {label} {row['ms_per_problem']:.2f} ms a problem, "
             f"reference {ref['ms_per_problem']:.2f}: compaug {ratio:.2f}x", whole_training_line(name, label, row, ref)]
    if "ms_per_problem_without_captures" in row:
        row["speedup_vs_reference_without_captures"] = steady = ref["ms_per_problem"] / row[
            "ms_per_problem_without_captures"]
        lines.append(f"  side by side ({name}, {device}): compaug {label} without its captures' seconds {steady:.2f}x")
    return lines


def step_runs(steps: str, precisions: str, teacher_passes: str) -> list[Run]:
    """The :class:`Run` of each step and precision: a step given as ``step:pass`` takes that teacher pass,
    ``step:pass:rounding`` that rounding of a shape-fixed step's shapes too (default coarse), and
    ``step:pass:rounding:fusion`` that fusion (default none), ``step:pass:rounding:fusion:bucketing`` that
    bucketing of the batches (default length); a bare ``rowwise`` each of ``teacher_passes``, any other bare step
    the default (waves); graphed steps fp32 only."""
    runs = []
    for spec in steps.split(","):
        step, _, rest = spec.partition(":")
        named, _, rest = rest.partition(":")
        rounding, _, rest = rest.partition(":")
        fusion, _, bucketing = rest.partition(":")
        rounding, fusion, bucketing = rounding or "coarse", fusion or "none", bucketing or "length"
        if rounding not in GRAPH_ROUNDINGS:
            raise ValueError(f"{spec}: rounding must be one of {', '.join(GRAPH_ROUNDINGS)}")
        if fusion not in GRAPH_FUSIONS:
            raise ValueError(f"{spec}: fusion must be one of {', '.join(GRAPH_FUSIONS)}")
        if bucketing not in BUCKETINGS:
            raise ValueError(f"{spec}: bucketing must be one of {', '.join(BUCKETINGS)}")
        for teacher_pass in [named] if named else teacher_passes.split(",") if step == "rowwise" else ["waves"]:
            check_teacher_pass(teacher_pass)
            runs += [Run(p, step, teacher_pass, rounding, fusion, bucketing) for p in precisions.split(",")
                     if not (step in GRAPHED_STEPS and p != "fp32")]
    return runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--datasets", default="mawps,math23k")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--steps", default="rowwise", help="training steps (TrainConfig.step), comma-separated: rowwise, "
                    "graphed and graphed-whole (CUDA, fp32 only: run for fp32 alone), dense (the graphed step's "
                    "pass eager); step:pass for a teacher pass other than waves (graphed:positions, the dense pass), "
                    "step:pass:rounding for the fine rounding of shapes (graphed-whole:waves:fine), "
                    "step:pass:rounding:fusion for fused elementwise chains (graphed-whole:waves:coarse:inductor), "
                    "step:pass:rounding:fusion:bucketing for batches by the decoder's steps "
                    "(rowwise:waves:coarse:none:steps)")
    ap.add_argument("--teacher-passes", default="waves", help="the row-wise step's teacher forcing "
                    "(GTSConfig.teacher_pass), comma-separated: waves, positions (the pass before 2026-11-27)")
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs (the first is reported apart)")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-timing", action="store_true", help="operation counts only")
    ap.add_argument("--epoch-batches", type=int, default=0, help="also count each of the trainer's first this many "
                    "batches, once taken (issue #32's figure a batch: kernels on CUDA, aten operations elsewhere)")
    ap.add_argument("--reference-epochs", type=int, default=0, help="also train the public GTS this many epochs")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    device = "cpu" if device == "auto" else device
    gpu = torch.cuda.get_device_name() if device == "cuda" else "none"
    print(f"device {device} ({gpu}); torch {torch.__version__}; threads {args.threads}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    report: dict = {"device": device, "gpu": gpu, "torch": torch.__version__, "args": vars(args), "datasets": {}}
    for name in args.datasets.split(","):
        problems = list(load_dataset(name, DATA[name]).problems)
        train, test = split(problems, args.seed)
        print(f"{name}: train {len(train)} / test {len(test)}", flush=True)
        figures = report["datasets"][name] = {}
        figures["gc_collect_s"] = collection_seconds()
        print(f"  a full gc.collect() in this process: {figures['gc_collect_s']:.3f} s (the graphed steps collect "
              "before a training's first capture only)", flush=True)
        parts = figures["parts_fp32"] = part_ops(args, train, device)
        print("  fp32 parts of a batch (aten ops): " + ", ".join(f"{k} {v}" for k, v in parts.items()), flush=True)
        runs = step_runs(args.steps, args.precisions, args.teacher_passes)
        ref = None
        if args.reference_epochs and not args.skip_timing:
            ref = figures["reference"] = run_reference(DATA[name], train, test, args.reference_epochs, args.threads,
                                                       device)
            save(args.out, report)
        for run in runs:
            label = run.label
            row = figures[label] = ops_per_batch(args, train, device, run)
            line = (f"  {label}: {row['aten_ops']} aten ops a batch of {args.batch_size} "
                    f"(issue #32's target: at most {OPS_TARGET})"
                    + (f", {row['generated_kernels']} generated kernels" if run.fusion != "none" else ""))
            if device == "cuda":
                line += (f", {row['kernels']} kernels ({row['launches']} launches, {row['graph_launches']} graph "
                         f"launches), GPU busy "
                         f"{100 * row['gpu_busy_share']:.0f}% of the profiled batch")
            print(line, flush=True)
            steady = row["steady_step"] = steady_step(args, train, device, run)
            print(f"  {label} steady-state step (no setup): {steady['aten_ops']} aten ops"
                  + (f", {steady['generated_kernels']} generated kernels" if run.fusion != "none" else "")
                  + (f", {steady['kernels']} kernels ({steady['launches']} launches, {steady['graph_launches']} "
                     f"graph launches), GPU busy "
                     f"{100 * steady['gpu_busy_share']:.0f}%, {steady['host_waits']} host waits "
                     f"{steady['host_wait_places']}" if device == "cuda" else ""), flush=True)
            if device == "cuda":
                print(f"  {label} steady step's most launched kernels: " + "; ".join(
                    f"{k['count']} x {k['name'][:60]}" for k in steady["kernel_names"][:8]), flush=True)
            if args.epoch_batches:
                row["epoch_batches"] = epoch_counts(args, train, device, run, args.epoch_batches)
                print(epoch_line(label, row["epoch_batches"]), flush=True)
            save(args.out, report)  # the counts, before the step's timed training
            if args.skip_timing:
                continue
            row.update(timed_training(args, train, test, device, run))
            print(f"  {label} (ran {row['precision_ran']}): epoch {row['epoch_s']:.2f} s (first "
                  f"{row['epoch_seconds'][0]:.2f} s), {row['ms_per_problem']:.2f} ms a problem; beam-5 "
                  f"{row['beam5_problems_s']:.0f} problems/s; scoring {row['scoring_problems_s']:.0f} problems/s"
                  + (f"; peak GPU memory {row['peak_gpu_mb']:.0f} MB" if device == "cuda" else ""), flush=True)
            if "captures" in row:
                print(capture_line(label, row), flush=True)
            if ref is not None:
                print("\n".join(side_by_side_lines(name, device, label, row, ref)), flush=True)
            save(args.out, report)
    save(args.out, report)
    return 0


def save(out: str | None, report: dict) -> None:
    """``report`` as JSON at ``out`` (if given), replaced whole: a reader never finds half a file."""
    if out:
        tmp = Path(out).with_name(Path(out).name + ".tmp")
        tmp.write_text(json.dumps(report, indent=2))
        tmp.replace(out)


if __name__ == "__main__":
    sys.exit(main())
