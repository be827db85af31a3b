"""GTS speed, memory and accuracy on MAWPS, with baselines measured in the same run.

Prints: seconds per training epoch; the epoch's achieved matrix FLOP/s (FLOPs counted with
torch's FlopCounterMode over one forward+backward pass of the same batches) next to a plain
square torch matmul's FLOP/s; inference problems/s at beam 5 batched vs batch-size-1 decoding of
the same model (and whether both give the same expressions); candidates scored per second (teacher-forced
likelihood, batched, as a round scores) against one training epoch; peak RSS; with ``--reference-epochs N``
the public GTS (``../shared/reference-gts``, GPL-3, run as a separate process, never imported) trained
for N epochs on the same train side with the same thread count, right after compaug's epochs, and the
ratio of milliseconds per problem (with ``--reference-eval``, its one-at-a-time beam-5 decoding speed
on the same test side); with ``--epochs 80`` the
answer accuracy on the test side (best epoch chosen on a validation slice of train, never test).
``--valid-fraction 0`` is the published protocol: every problem of the 80% train side is trained on,
for a fixed number of epochs, and the last epoch's weights are scored on test once (no selection).

    .venv/bin/python bench/solver_speed.py --epochs 1            # speed only
    .venv/bin/python bench/solver_speed.py --epochs 2 --reference-epochs 2 --reference-eval   # side by side
    .venv/bin/python bench/solver_speed.py --epochs 80 --out /tmp/gts80.json
    .venv/bin/python bench/solver_speed.py --epochs 80 --valid-fraction 0 --out /tmp/gts80_full.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()  # the CLI's OpenMP waiting (flows/environment.py), set before torch loads OpenMP

import torch  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from mwp.readers import load_dataset  # noqa: E402
from solvers.base import BUCKETINGS, GRAPH_FUSIONS, STEPS, TrainConfig  # noqa: E402
from solvers.checkpoint import data_hash, save_checkpoint  # noqa: E402
from solvers.evaluate import evaluate_predictions  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_decoder import TEACHER_PASSES  # noqa: E402
from solvers.trainer import length_bucketed, log_likelihoods, predict, train_model  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402


def split(problems, seed: int, test_fraction: float, valid_fraction: float):
    order = list(problems)
    random.Random(seed).shuffle(order)
    n_test = round(len(order) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    n_valid = round(len(train) * valid_fraction)
    return train[n_valid:], train[:n_valid], test


def checkpoint_split(solver, problems, seed: int | None = None):
    """(train, test) of the seeded split a checkpoint saved by this script (``--save``) was trained
    on: its seed and validation fraction come from the checkpoint unless ``seed`` is given. Exits
    with a clear message when the training data's hash differs (another seed or data file), since
    its "test" side would then overlap what the model was trained on."""
    info = solver.training_summary
    seed = int(info.get("seed", 0)) if seed is None else seed
    train, _, test = split(problems, seed, 0.2, float(info.get("valid_fraction", 0.0)))
    if data_hash(train) != solver.train_data_hash:
        raise SystemExit(f"the checkpoint was not trained on the train side of the seed-{seed} split of this data "
                         f"(training data hash differs): pass the --seed and --data it was trained with")
    return train, test


def matmul_flops(size: int = 2048, repeats: int = 10, dtype=torch.float32, budget_s: float = 5.0) -> tuple[float, int]:
    """FLOP/s of a plain n x n matmul in ``dtype`` (``repeats`` products after one more), and n: ``size``, or the
    largest power of two from 256 whose products fit about ``budget_s`` seconds, each doubling of n taking about 8x
    as long. A CPU without bfloat16 instructions (AVX2 alone) multiplies bfloat16 in a slow reference kernel, about
    14 s a 2048 x 2048 product on one thread of an AMD EPYC: 2.5 minutes at the full size for a figure that is only
    a yardstick."""
    n = min(256, size)
    while True:
        a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
        t0 = time.perf_counter()
        a @ b
        one = time.perf_counter() - t0
        if n >= size or 8 * one * (repeats + 1) > budget_s:
            break
        n *= 2
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - t0), n


REFERENCE = ROOT.parent / "shared" / "reference-gts" / "reference_gts.py"
EPOCH_LINE = re.compile(r"^epoch (\d+) seconds ([\d.]+) problems (\d+) ms_per_problem ([\d.]+)")
EVAL_LINE = re.compile(r"inference ([\d.]+) problems/s")


def reference_stdout(data, train, test, epochs: int, threads: int, env: dict | None = None,
                     launcher: tuple[str, ...] = (), args: tuple[str, ...] = ()) -> str:
    """The public GTS trained ``epochs`` on the same train side in a separate process (its own driver;
    the GPL-3 kit is never imported here), with ``env`` over this process's environment; its stdout."""
    if not REFERENCE.exists():
        raise SystemExit(f"--reference-epochs: {REFERENCE} not found (the kit lives in ../shared/reference-gts)")
    with tempfile.TemporaryDirectory() as tmp:
        split_path = Path(tmp) / "split.json"
        split_path.write_text(json.dumps({"train": [p.id for p in train], "test": [p.id for p in test]}))
        full_env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), **(env or {})}
        cmd = [sys.executable, *launcher, str(REFERENCE), str(data), str(split_path), str(epochs), *args]
        proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"the reference GTS failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def run_reference(data: str, train, test, epochs: int, threads: int, evaluate: bool, omp_wait: str = "same") -> dict:
    """Train the public GTS for ``epochs`` on the same train side and parse its per-epoch lines.
    ``omp_wait``: ``same`` runs it with this process's OpenMP wait policy, ``passive``/``active`` with that one."""
    env = {} if omp_wait == "same" else {"OMP_WAIT_POLICY": omp_wait.upper(),
                                         "GOMP_SPINCOUNT": "0" if omp_wait == "passive" else "infinite"}
    stdout = reference_stdout(data, train, test, epochs, threads, env, args=("--eval",) if evaluate else ())
    epochs_seen, out = [], {"stdout": stdout}
    for line in stdout.splitlines():
        print(f"  reference | {line}", flush=True)
        if m := EPOCH_LINE.match(line):
            epochs_seen.append({"epoch": int(m[1]), "seconds": float(m[2]), "problems": int(m[3]),
                                "ms_per_problem": float(m[4])})
        elif m := EVAL_LINE.search(line):
            out["bs1_problems_s"] = float(m[1])
    if not epochs_seen:
        raise SystemExit(f"the reference GTS printed no epoch line: {stdout[-1000:]}")
    out["epochs"] = epochs_seen
    out["ms_per_problem"] = statistics.median(e["ms_per_problem"] for e in epochs_seen)
    return out


def epoch_flops(model, encoding, train, batch_size: int, seed: int) -> float:
    """FLOPs of one training epoch's forward and backward passes (same batches as the trainer)."""
    model.train()
    with FlopCounterMode(display=False) as counter:
        for chunk in length_bucketed(train, batch_size, random.Random(seed)):
            model.zero_grad(set_to_none=True)
            model.loss(encoding.batch(chunk)).backward()
    model.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def throughput(model, encoding, problems, beam: int, batch_size: int):
    t0 = time.perf_counter()
    preds = predict(model, encoding, problems, beam, batch_size)
    return len(problems) / (time.perf_counter() - t0), preds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=512, help="512 is the paper; 256 is the small CPU option")
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=TrainConfig.lr, help="Adam learning rate (the paper's 1e-3 at batch 64)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--valid-fraction", type=float, default=0.1,
                    help="slice of the 80%% train side used for selection (0: fixed epochs, last epoch scored)")
    ap.add_argument("--min-count", type=int, default=None,
                    help="input words seen fewer times in training become <unk> (default: GTSConfig's)")
    ap.add_argument("--first-slot", action="store_true",
                    help="train a repeated value on its first slot (GTSConfig.any_equal_slot=False; the runs before 2026-11-24)")
    ap.add_argument("--teacher-pass", default=GTSConfig.teacher_pass, choices=TEACHER_PASSES,
                    help="teacher forcing's walk of the trees (GTSConfig.teacher_pass; positions: the pass before "
                         "2026-11-27)")
    ap.add_argument("--bs1-problems", type=int, default=200, help="test problems decoded one at a time")
    ap.add_argument("--reference-epochs", type=int, default=0,
                    help="also train the public GTS (../shared/reference-gts) this many epochs on the same train "
                         "side, right after compaug's, and print the per-problem ratio (0: skip)")
    ap.add_argument("--reference-eval", action="store_true",
                    help="with --reference-epochs: also time the reference's one-at-a-time beam-5 decoding of the test side")
    ap.add_argument("--reference-omp-wait", choices=["same", "passive", "active"], default="same",
                    help="OpenMP wait policy of the reference process (same: this process's, which the bench sets "
                         "to passive unless OMP_WAIT_POLICY is given); each side can then run with its faster one")
    ap.add_argument("--precision", default="auto",
                    help="training precision (auto, fp32, bf16); a comma list such as bf16,fp32 trains the first "
                         "as the measured model and times the others for the same epochs from the same start, in "
                         "the same run, for a ratio")
    ap.add_argument("--step", default="rowwise", choices=STEPS,
                    help="the measured training's step (TrainConfig.step; graphed, graphed-whole: CUDA and fp32 only)")
    ap.add_argument("--bucketing", default="length", choices=BUCKETINGS,
                    help="how the measured training batches its problems (TrainConfig.bucketing)")
    ap.add_argument("--graph-fusion", default="none", choices=GRAPH_FUSIONS,
                    help="the measured training's fusion of its pass's elementwise chains (TrainConfig.graph_fusion; "
                         "inductor: with a shape-fixed step only)")
    ap.add_argument("--out", help="write the figures as JSON here")
    ap.add_argument("--save", help="save the trained model here (a checkpoint load_solver reads; bench/beam_speed.py)")
    ap.add_argument("--resume-dir", help="save the measured training's state here after every epoch and continue "
                                         "from it when started again (a long run that outlasts a session)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    data = load_dataset("mawps", args.data)
    train, valid, test = split(data.problems, args.seed, 0.2, args.valid_fraction)
    print(f"MAWPS: {len(data.problems)} problems ({sum(data.skipped.values())} skipped); "
          f"train {len(train)} / valid {len(valid)} (selection) / test {len(test)}; seed {args.seed}", flush=True)
    if not valid and args.epochs > 1:
        print(f"no validation slice: fixed {args.epochs} epochs on the whole train side, last epoch scored", flush=True)
    cfg = GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden, any_equal_slot=not args.first_slot,
                    teacher_pass=args.teacher_pass,
                    **({} if args.min_count is None else {"min_count": args.min_count}))
    encoding = build_encoding(train, min_count=cfg.min_count)
    model = GTSModel(cfg, encoding)
    print(f"GTS {cfg}; {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters; "
          f"{len(encoding.input)} input words (min_count {cfg.min_count}); torch threads {torch.get_num_threads()}", flush=True)

    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    precision, *others = [p.strip() for p in args.precision.split(",")]
    peak_matmul, peak_n = matmul_flops()
    bf16_matmul, bf16_n = matmul_flops(dtype=torch.bfloat16)
    print(f"plain matmul: float32 {peak_matmul / 1e9:.1f} GFLOP/s ({peak_n}x{peak_n}), bfloat16 "
          f"{bf16_matmul / 1e9:.1f} GFLOP/s ({bf16_n}x{bf16_n})", flush=True)
    flops = epoch_flops(model, encoding, train, args.batch_size, args.seed)
    torch.manual_seed(args.seed)
    model = GTSModel(cfg, encoding)  # fresh weights: the counting pass computed gradients only, but start clean

    def report(stats):
        acc = "" if stats.valid_answer_acc is None else f" valid answer acc {stats.valid_answer_acc:.3f}"
        print(f"epoch {stats.epoch}: loss {stats.train_loss:.4f} train pass {stats.seconds:.1f}s{acc}", flush=True)

    compared = {}
    for other in others:  # timing only: the same start, the same batches, no validation
        torch.manual_seed(args.seed)
        timed = train_model(GTSModel(cfg, encoding), encoding, train, [], TrainConfig(
            epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed, progress=False, precision=other,
            bucketing=args.bucketing),
            report)
        compared[other] = statistics.median(e.seconds for e in timed.epochs)
        print(f"precision {other} ({timed.precision}): {compared[other]:.1f} s per epoch (median of {args.epochs})",
              flush=True)
    tcfg = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, beam_size=args.beam, seed=args.seed,
                       progress=False, eval_every=1 if args.epochs > 1 else 10**9, precision=precision,
                       resume_dir=args.resume_dir, step=args.step,
                       bucketing=args.bucketing, graph_fusion=args.graph_fusion)
    result = train_model(model, encoding, train, valid if args.epochs > 1 else [], tcfg, report)
    epoch_s = statistics.median(e.seconds for e in result.epochs)
    for other, seconds in compared.items():
        print(f"precision {precision} vs {other}: {seconds / epoch_s:.2f}x faster per epoch (same run)", flush=True)
    achieved = flops / epoch_s
    print(f"training ({precision}: {result.precision}): {epoch_s:.1f} s per epoch (median of {len(result.epochs)}; "
          f"{len(train)} problems, {len(train) / epoch_s:.0f} problems/s); " + (
              f"best epoch {result.best_epoch} by valid answer acc {result.best_valid_answer_acc}"
              if result.best_valid_answer_acc is not None else f"weights of the last epoch ({result.best_epoch})"),
          flush=True)
    print(f"matrix FLOP/s: epoch {achieved / 1e9:.1f} GFLOP/s ({flops / 1e12:.2f} TFLOP per epoch) vs plain "
          f"{peak_n}x{peak_n} matmul {peak_matmul / 1e9:.1f} GFLOP/s float32 ({100 * achieved / peak_matmul:.0f}%; the "
          f"epoch is {peak_matmul / achieved:.2f}x the float32 matmul floor), {bf16_matmul / 1e9:.1f} GFLOP/s "
          f"bfloat16 ({100 * achieved / bf16_matmul:.0f}%)", flush=True)

    ms_per_problem = 1000 * epoch_s / len(train)
    reference = None
    if args.reference_epochs:
        print(f"reference GTS: {args.reference_epochs} epochs, {args.threads} threads, same train/test ids", flush=True)
        reference = run_reference(args.data, train, test, args.reference_epochs, args.threads, args.reference_eval,
                                  args.reference_omp_wait)
        print(f"side by side: compaug {ms_per_problem:.2f} ms a problem, reference {reference['ms_per_problem']:.2f} "
              f"ms a problem (medians over epochs): compaug {reference['ms_per_problem'] / ms_per_problem:.2f}x "
              f"faster per problem", flush=True)

    if args.save:
        save_checkpoint(args.save, "gts", dataclasses.asdict(cfg), encoding, model.state_dict(), data_hash(train),
                        {"training": {"epochs_run": len(result.epochs), "best_epoch": result.best_epoch,
                                      "seed": args.seed, "valid_fraction": args.valid_fraction}})
    batched_ps, preds = throughput(model, encoding, test, args.beam, args.batch_size)
    subset = test[: args.bs1_problems]
    single_ps, single = throughput(model, encoding, subset, args.beam, 1)
    same = sum(a.tokens == b.tokens for a, b in zip(preds[: len(subset)], single))
    print(f"inference beam {args.beam}: batched {batched_ps:.1f} problems/s ({len(test)} problems, batch "
          f"{args.batch_size}); batch-size-1 {single_ps:.1f} problems/s ({len(subset)} problems); "
          f"ratio {batched_ps / single_ps:.1f}x; same expression {same}/{len(subset)}", flush=True)
    # Scoring, as a round scores its candidates: teacher-forced likelihood in batches of 64 (the train side
    # stands in for candidates: the same kind of problems). Compared with one training epoch of the same model.
    t0 = time.perf_counter()
    log_likelihoods(model, encoding, train, batch_size=64)
    scored_ps = len(train) / (time.perf_counter() - t0)
    round_cap = 1500
    print(f"scoring (teacher-forced likelihood, batch 64): {scored_ps:.0f} candidates/s; a round of {round_cap} "
          f"candidates {round_cap / scored_ps:.1f} s against one training epoch {epoch_s:.1f} s "
          f"({round_cap / scored_ps / epoch_s:.2f} of an epoch)", flush=True)
    report_test = evaluate_predictions(test, preds)
    if reference and "bs1_problems_s" in reference:
        print(f"inference, one at a time (beam {args.beam}): compaug {single_ps:.1f} problems/s, reference "
              f"{reference['bs1_problems_s']:.1f} problems/s (beam 5); compaug batched {batched_ps:.1f} problems/s",
              flush=True)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"test: answer acc {report_test.answer_acc:.4f}, equation acc {report_test.equation_acc:.4f}, "
          f"invalid {report_test.invalid_rate:.4f} (n={report_test.n}) after {len(result.epochs)} epochs", flush=True)
    print(f"peak RSS {rss_mb:.0f} MB; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          f"(other jobs share the CPU: times are upper bounds)", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({
            "config": cfg.__dict__, "batch_size": args.batch_size, "lr": args.lr, "epochs": len(result.epochs),
            "train": len(train), "valid": len(valid),
            "test": len(test), "epoch_seconds": epoch_s, "epoch_seconds_all": [e.seconds for e in result.epochs],
            "valid_answer_acc": [e.valid_answer_acc for e in result.epochs], "best_epoch": result.best_epoch,
            "epoch_gflops": flops / 1e9, "achieved_gflop_s": achieved / 1e9, "matmul_gflop_s": peak_matmul / 1e9,
            "matmul_size": peak_n, "bf16_matmul_size": bf16_n, "bf16_matmul_gflop_s": bf16_matmul / 1e9,
            "precision": precision, "precision_ran": result.precision,
            "step": args.step,
            "bucketing": args.bucketing, "graph_fusion": args.graph_fusion,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "gomp_spincount": os.environ.get("GOMP_SPINCOUNT"),
            "reference_omp_wait": args.reference_omp_wait,
            "compared_epoch_seconds": compared,
            "batched_problems_s": batched_ps, "scored_candidates_s": scored_ps, "bs1_problems_s": single_ps, "bs1_same": same,
            "test_answer_acc": report_test.answer_acc, "test_equation_acc": report_test.equation_acc,
            "test_invalid_rate": report_test.invalid_rate, "peak_rss_mb": rss_mb,
            "test_correct": {p.id: bool(ok) for p, ok in zip(test, report_test.per_problem)},
            "total_seconds": result.seconds, "ms_per_problem": ms_per_problem,
            "reference": reference and {k: v for k, v in reference.items() if k != "stdout"},
            "load_average_end": os.getloadavg()[0]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
