"""Does bf16 training lower MAWPS accuracy? Paper-size GTS trained in each precision on the same seeds,
paired per seed on the same test problems, with a bootstrap interval of the difference.

Each (seed, precision) is one ``bench/solver_speed.py`` run of the published protocol (a fixed number
of epochs on the whole train side, the last epoch scored once on the seed's test side; ``--epochs 80
--valid-fraction 0``), in its own process, ``--workers`` at a time (default one after the other). A run
whose JSON is in ``--out-dir`` is done and not run again; an unfinished run continues from its last
epoch (``--resume-dir``: the training state after every epoch, under ``--state-dir``), so the whole
comparison (six runs of about half an hour each on 2 cores) can span several sittings: run the same
command again.

    .venv/bin/python bench/precision_accuracy.py --seeds 0,1,2 --precisions fp32,bf16 \\
        --out-dir docs/measurements/precision_accuracy
    .venv/bin/python bench/precision_accuracy.py --workers 2 --threads 1 ...   # two one-thread runs at a time
    .venv/bin/python bench/precision_accuracy.py ... --report-only   # the table of the runs done so far
    python bench/precision_accuracy.py --workers 6 --no-resume ...    # on one GPU: six runs side by side
    .venv/bin/python bench/precision_accuracy.py --tiny --data SMALL.json ...  # the machinery, in seconds

A change to the code that could move accuracy is checked the same way: run the runs of the new code into
a new ``--out-dir`` and give the old code's runs (same seeds, same script) as ``--baseline-dir``; the
report then pairs each precision's runs with the baseline's, seed by seed, on the same test problems.

    .venv/bin/python bench/precision_accuracy.py --seeds 0,1,2 --precisions fp32 --workers 2 --threads 1 \
        --out-dir NEW --baseline-dir docs/measurements/precision_accuracy
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tasks.study.stats import mean_std, paired_bootstrap_per_seed  # noqa: E402


def run_name(precision: str, seed: int) -> str:
    return f"{precision}_seed{seed}"


def run_one(args, precision: str, seed: int, out: Path) -> None:
    code = Path(args.code).resolve() if args.code else ROOT
    cmd = [sys.executable, str(code / "bench/solver_speed.py"), "--epochs", str(args.epochs), "--valid-fraction", "0",
           "--precision", precision, "--seed", str(seed), "--threads", str(args.threads), "--bs1-problems",
           str(args.bs1_problems), "--hidden", str(args.hidden), "--embedding", str(args.embedding),
           "--batch-size", str(args.batch_size),
           # the paper's 1e-3 is every solver_speed.py's default: left out, older code without --lr runs too
           *([] if args.lr == 1e-3 else ["--lr", str(args.lr)]),
           *([] if args.step == "rowwise" else ["--step", args.step]),  # likewise
           *([] if args.teacher_pass == "waves" else ["--teacher-pass", args.teacher_pass]),  # likewise
           *([] if args.bucketing == "length" else ["--bucketing", args.bucketing]),  # likewise
           *([] if args.graph_fusion == "none" else ["--graph-fusion", args.graph_fusion]),  # likewise
           *([] if args.no_resume else ["--resume-dir", str(Path(args.state_dir) / run_name(precision, seed))]),
           "--out", str(out), *(["--data", args.data] if args.data else [])]
    print(f"== {run_name(precision, seed)}: {' '.join(cmd[1:])}", flush=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=code, env={**os.environ, "PYTHONPATH": str(code)})
    if done.returncode != 0:
        raise RuntimeError(f"{run_name(precision, seed)} failed (exit {done.returncode}); run the command again "
                           f"to continue it from its last epoch")
    state = Path(args.state_dir) / run_name(precision, seed) / "train_state.pt"
    state.unlink(missing_ok=True)  # the JSON is the result now
    print(f"== {run_name(precision, seed)} done in {time.perf_counter() - started:.0f} s", flush=True)


def load_runs(out_dir: Path, seeds: list[int], precisions: list[str]) -> dict[tuple[str, int], dict]:
    runs = {}
    for precision in precisions:
        for seed in seeds:
            path = out_dir / f"{run_name(precision, seed)}.json"
            if path.exists():
                runs[precision, seed] = json.loads(path.read_text())
    return runs


def paired_line(label: str, a: dict[int, dict], b: dict[int, dict]) -> str:
    """The paired bootstrap interval of a - b over the seeds both have (runs keyed by seed)."""
    seeds = [s for s in a if s in b]
    if not seeds:
        return f"{label}: no seed has both runs yet"
    interval = paired_bootstrap_per_seed({s: a[s]["test_correct"] for s in seeds},
                                         {s: b[s]["test_correct"] for s in seeds})
    return (f"{label}: {interval.difference:+.4f} [{interval.low:+.4f}, {interval.high:+.4f}] (95% paired "
            f"bootstrap over {interval.seeds} seeds and their {interval.problems} test problems"
            + ("; one seed: the interval covers test problems, not seeds" if interval.seeds == 1 else "") + ")")


def report_against(out_dir: Path, baseline_dir: Path, seeds: list[int], precisions: list[str]) -> None:
    """Each precision's runs here against the same precision's runs in ``baseline_dir``, per seed."""
    new, old = load_runs(out_dir, seeds, precisions), load_runs(baseline_dir, seeds, precisions)
    print(f"\nthis run set ({out_dir}) against the baseline ({baseline_dir}), same seeds and test problems")
    print("| seed | precision | baseline: test answer acc (epoch s) | this: test answer acc (epoch s) | this - baseline |")
    print("|---|---|---|---|---|")
    for p in precisions:
        for seed in seeds:
            a, b = new.get((p, seed)), old.get((p, seed))
            cells = ["-" if r is None else f"{r['test_answer_acc']:.4f} ({r['epoch_seconds']:.1f})" for r in (b, a)]
            diff = "-" if a is None or b is None else f"{a['test_answer_acc'] - b['test_answer_acc']:+.4f}"
            print(f"| {seed} | {p} | {cells[0]} | {cells[1]} | {diff} |")
    for p in precisions:
        for label, runs in (("baseline", old), ("this", new)):
            accs = [runs[p, s]["test_answer_acc"] for s in seeds if (p, s) in runs]
            if accs:
                mean, std = mean_std(accs)
                print(f"{p} {label}: mean test answer acc {mean:.4f} +- {std:.4f} (sample std over {len(accs)} seeds)")
        print(paired_line(f"{p} this - baseline", {s: new[p, s] for s in seeds if (p, s) in new},
                          {s: old[p, s] for s in seeds if (p, s) in old}))


def report(out_dir: Path, seeds: list[int], precisions: list[str]) -> None:
    runs = load_runs(out_dir, seeds, precisions)
    base, *others = precisions
    print("\n| seed | " + " | ".join(f"{p}: test answer acc (epoch s)" for p in precisions) + " | "
          + " | ".join(f"{p} - {base}" for p in others) + " |")
    print("|---" * (1 + len(precisions) + len(others)) + "|")
    for seed in seeds:
        cells = []
        for p in precisions:
            r = runs.get((p, seed))
            cells.append("-" if r is None else f"{r['test_answer_acc']:.4f} ({r['epoch_seconds']:.1f})")
        diffs = []
        for p in others:
            a, b = runs.get((p, seed)), runs.get((base, seed))
            diffs.append("-" if a is None or b is None else f"{a['test_answer_acc'] - b['test_answer_acc']:+.4f}")
        print(f"| {seed} | " + " | ".join(cells) + " | " + " | ".join(diffs) + " |")
    for p in precisions:
        accs = [runs[p, s]["test_answer_acc"] for s in seeds if (p, s) in runs]
        if accs:
            mean, std = mean_std(accs)
            print(f"{p}: mean test answer acc {mean:.4f} +- {std:.4f} (sample std over {len(accs)} seeds)")
    for p in others:
        a = {s: runs[p, s] for s in seeds if (p, s) in runs and (base, s) in runs}
        print(paired_line(f"{p} - {base}", a, {s: runs[base, s] for s in a}))
        if not a:
            continue
        same = [runs[p, s]["epoch_seconds"] / runs[base, s]["epoch_seconds"] for s in a]
        print(f"{p} epoch time / {base} epoch time, per seed: " + ", ".join(f"{x:.2f}" for x in same)
              + " (separate processes, side by side with --workers: not a same-process ratio)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--precisions", default="fp32,bf16", help="the first is the baseline of the differences")
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="runs at a time, each its own process of --threads threads")
    ap.add_argument("--bs1-problems", type=int, default=20, help="passed on; only the inference timing uses it")
    ap.add_argument("--hidden", type=int, default=512, help="GTS hidden size (512: the paper's)")
    ap.add_argument("--embedding", type=int, default=128, help="GTS embedding size (128: the paper's)")
    ap.add_argument("--batch-size", type=int, default=64, help="training batch (64: the paper's)")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (1e-3: the paper's at batch 64); "
                    "a larger batch's setting is compared against batch 64 with --baseline-dir")
    ap.add_argument("--step", default="rowwise", help="the trainings' step (TrainConfig.step): the graphed step "
                    "against the row-wise one with --baseline-dir")
    ap.add_argument("--teacher-pass", default="waves", help="GTSConfig.teacher_pass of the trainings (positions: "
                                                             "the pass before 2026-11-27)")
    ap.add_argument("--bucketing", default="length", help="TrainConfig.bucketing of the trainings (steps: by the "
                                                          "decoder's steps, against length with --baseline-dir)")
    ap.add_argument("--graph-fusion", default="none", help="TrainConfig.graph_fusion of the trainings (inductor: "
                                                            "a shape-fixed step's elementwise chains fused, against "
                                                            "the same step unfused with --baseline-dir)")
    ap.add_argument("--no-resume", action="store_true", help="no training state saved after each epoch (a run "
                                                             "that finishes in one sitting, as on a GPU)")
    ap.add_argument("--tiny", action="store_true", help="a check of the machinery in seconds: 2 epochs of a GTS "
                                                        "of hidden 16 and embedding 8, one thread a run, no states; "
                                                        "its accuracies mean nothing")
    ap.add_argument("--data", help="MAWPS.json (default: solver_speed.py's)")
    ap.add_argument("--out-dir", default=str(ROOT / "runs/precision_accuracy"), help="one JSON per run")
    ap.add_argument("--state-dir", default=str(ROOT / "runs/precision_accuracy_state"),
                    help="training states of unfinished runs")
    ap.add_argument("--code", help="a checkout of other code (e.g. `git worktree add --detach DIR COMMIT`) whose "
                                   "bench/solver_speed.py trains the runs: the old step against the new, with "
                                   "--baseline-dir")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--baseline-dir", help="runs of the same seeds and precisions by other code (the "
                                           "comparison of a code change): reported against this run set")
    args = ap.parse_args(argv)
    if args.tiny:
        args.epochs, args.hidden, args.embedding, args.threads, args.bs1_problems = 2, 16, 8, 1, 1
        args.no_resume = True
    seeds = [int(s) for s in args.seeds.split(",")]
    precisions = [p.strip() for p in args.precisions.split(",")]
    if len(precisions) < 2 and not args.baseline_dir:
        ap.error("--precisions needs a baseline and at least one other (or a --baseline-dir to compare with)")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        todo = []
        for seed in seeds:  # both precisions of a seed before the next seed: pairs complete early
            for precision in precisions:
                out = out_dir / f"{run_name(precision, seed)}.json"
                if out.exists():
                    print(f"== {run_name(precision, seed)}: done ({out})", flush=True)
                else:
                    todo.append((precision, seed, out))
        # Runs are independent processes: with --workers 2 --threads 1 two one-thread trainings share 2 cores,
        # more problems a second together than one two-thread training (a second thread gains 1.2-1.6x).
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            futures = [pool.submit(run_one, args, precision, seed, out) for precision, seed, out in todo]
            failed = [str(f.exception()) for f in futures if f.exception() is not None]
        if failed:
            raise SystemExit("\n".join(failed))
    if len(precisions) > 1:
        report(out_dir, seeds, precisions)
    if args.baseline_dir:
        report_against(out_dir, Path(args.baseline_dir), seeds, precisions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
