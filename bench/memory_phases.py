"""Resident memory of bench/solver_speed.py's phases, for one code tree or several side by side.

Runs, in one process a tree, what ``solver_speed.py --epochs 1`` runs in its own process: the epoch
whose FLOPs it counts (FlopCounterMode), the training epoch, batched beam-5 inference of the test
side, beam 5 one problem at a time, and teacher-forced scoring of the train side; after each phase it
prints the resident set now and the process's peak so far (a peak RSS is per process, so each tree
and repeat gets its own). The public GTS that ``--reference-epochs`` adds is a separate process,
the same code for every tree, and not run here. Paper-size GTS, float32, MAWPS's seed-0 split.

With ``--trees A B`` each tree's code (its solvers/, mwp/ and bench/solver_speed.py) runs in a child
process, in turn A B A B ... for ``--repeats``, and a table gives each phase's median per tree.

    .venv/bin/python bench/memory_phases.py                                   # this tree
    git worktree add --detach /tmp/old c2e9a31
    .venv/bin/python bench/memory_phases.py --trees /tmp/old . --repeats 2   # OLD and this tree
    .venv/bin/python bench/memory_phases.py --trees /tmp/old . --problems 300 --skip-flops
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "PHASES "


def current_mb() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() // 2**20


def peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def measure(tree: Path, args) -> list[dict]:
    """The phases in this process with ``tree``'s code; one record a phase."""
    sys.path[:0] = [str(tree), str(tree / "bench")]
    import solver_speed as speed  # the tree's own, with its split and FLOP-count epoch
    import torch
    from mwp.readers import load_dataset
    from solvers.base import TrainConfig
    from solvers.gts import GTSConfig, GTSModel
    from solvers.trainer import log_likelihoods, predict, train_model
    from solvers.vocab import build_encoding

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    train, _, test = speed.split(load_dataset("mawps", args.data).problems, 0, 0.2, 0.1)
    train = train[: args.problems] if args.problems else train
    cfg = GTSConfig(embedding_size=128, hidden_size=args.hidden)
    encoding = build_encoding(train, min_count=cfg.min_count)
    records, start = [], time.perf_counter()

    def mark(phase: str) -> None:
        records.append({"phase": phase, "current_mb": current_mb(), "peak_mb": peak_mb(),
                        "seconds": round(time.perf_counter() - start, 1)})
        print(f"  {tree.name:>12} {phase:<22} current {records[-1]['current_mb']:5d} MB, "
              f"peak {records[-1]['peak_mb']:5d} MB", file=sys.stderr, flush=True)

    model = GTSModel(cfg, encoding)
    mark("model built")
    if not args.skip_flops:
        speed.epoch_flops(model, encoding, train, 64, 0)
        mark("FLOP-count epoch")
        torch.manual_seed(0)
        model = GTSModel(cfg, encoding)
    tcfg = TrainConfig(epochs=args.epochs, batch_size=64, seed=0, progress=False, eval_every=10**9, precision="fp32")
    train_model(model, encoding, train, [], tcfg)
    mark(f"training {args.epochs} epoch(s)")
    predict(model, encoding, test, 5, 64)
    mark("beam 5, batch 64")
    predict(model, encoding, test[:2], 5, 1)
    mark("beam 5, one at a time")
    log_likelihoods(model, encoding, train, batch_size=64)
    mark("scoring (likelihood)")
    return records


def compare(trees: list[Path], argv: list[str], repeats: int) -> None:
    """Each tree in a child process, in turn, ``repeats`` times; a table of median MB per phase."""
    runs: dict[Path, list[list[dict]]] = {tree: [] for tree in trees}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for r in range(repeats):
        for tree in trees:
            proc = subprocess.run([sys.executable, __file__, "--tree", str(tree), *argv], env=env,
                                  capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(f"{tree} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
            line = next(x for x in proc.stdout.splitlines() if x.startswith(MARK))
            runs[tree].append(json.loads(line[len(MARK):]))
            peaks = ", ".join(f"{p['phase']} {p['peak_mb']}" for p in runs[tree][-1])
            print(f"repeat {r + 1}, {tree}: peak MB after {peaks}", flush=True)
    phases = [p["phase"] for p in runs[trees[0]][0]]
    print(f"\nmedian of {repeats} (MB); peak = the process's peak RSS so far, now = resident after the phase")
    print(f"{'phase':<24}" + "".join(f"{str(t)[-16:] + ' peak':>21} {'now':>6}" for t in trees))
    for i, phase in enumerate(phases):
        cells = "".join(f"{statistics.median(run[i]['peak_mb'] for run in runs[t]):>21.0f} "
                        f"{statistics.median(run[i]['current_mb'] for run in runs[t]):>6.0f}" for t in trees)
        print(f"{phase:<24}{cells}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=1, help="training epochs (a leak grows with them)")
    ap.add_argument("--problems", type=int, default=0, help="first N of the train side (0: all 1,535)")
    ap.add_argument("--skip-flops", action="store_true", help="leave out the FLOP-count epoch")
    ap.add_argument("--trees", nargs="+", type=Path, help="code trees to compare, each in child processes")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--tree", type=Path, help=argparse.SUPPRESS)  # a child's tree
    args = ap.parse_args(argv)
    if args.trees:
        child_argv = ["--data", args.data, "--hidden", str(args.hidden), "--threads", str(args.threads),
                      "--epochs", str(args.epochs), "--problems", str(args.problems)]
        compare([t.resolve() for t in args.trees], child_argv + ["--skip-flops"] * args.skip_flops, args.repeats)
        return
    records = measure((args.tree or ROOT).resolve(), args)
    print(MARK + json.dumps(records), flush=True)


if __name__ == "__main__":
    main()
