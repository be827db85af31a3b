"""Does brief OpenMP spinning hurt when the CPU is shared? GTS training processes run side by side.

Each scenario starts two training processes at once (paper-size GTS on MAWPS, ``--threads`` torch
threads each, so two processes of two threads oversubscribe a 2-core machine twice), each with its own
OpenMP waiting: ``passive`` (``OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=0``, threads sleep at once, the
CLI's default) or ``spin`` (``GOMP_SPINCOUNT=300000``, libgomp's own default: a brief spin before
sleeping). Scenarios: both passive, both spinning, and one spinning next to a passive neighbour (does a
spinner slow somebody else's job?). Each process trains ``--epochs`` epochs through the trainer
(``train_model``, no validation) and reports its seconds an epoch; the scenarios run ``--repeats``
times in alternating order, and the script prints milliseconds a problem per process and the two
processes' problems per second together.

    .venv/bin/python bench/omp_contention.py --epochs 1 --repeats 2
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WAITS = {"passive": {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"},
         "spin": {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "300000"}}
SCENARIOS = [("passive", "passive"), ("spin", "spin"), ("spin", "passive")]


def child(args) -> None:
    """One training process: prints one JSON line with its epochs' seconds."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    import torch

    from mwp.readers import load_dataset
    from solver_speed import split
    from solvers.base import TrainConfig
    from solvers.gts import GTSConfig, GTSModel
    from solvers.trainer import train_model
    from solvers.vocab import build_encoding

    torch.set_num_threads(args.threads)
    train, _, _ = split(load_dataset("mawps", args.data).problems, 0, 0.2, 0.1)
    cfg = GTSConfig(embedding_size=128, hidden_size=args.hidden)
    encoding = build_encoding(train, min_count=cfg.min_count)
    torch.manual_seed(0)
    model = GTSModel(cfg, encoding)
    seconds: list[float] = []
    config = TrainConfig(epochs=args.epochs, seed=0, progress=False, precision=args.precision, device="cpu")
    train_model(model, encoding, train, [], config, on_epoch=lambda s: seconds.append(s.seconds))
    print(json.dumps({"problems": len(train), "epoch_seconds": seconds}), flush=True)


def run_pair(args, waits: tuple[str, str]) -> list[dict]:
    argv = [sys.executable, __file__, "--child", "--data", args.data, "--epochs", str(args.epochs),
            "--threads", str(args.threads), "--hidden", str(args.hidden), "--precision", args.precision]
    procs = [subprocess.Popen(argv, env=os.environ | WAITS[w], stdout=subprocess.PIPE, text=True) for w in waits]
    results = []
    for wait, proc in zip(waits, procs):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a training process ({wait}) failed with status {proc.returncode}")
        record = json.loads(out.strip().splitlines()[-1])
        record["wait"] = wait
        record["ms_per_problem"] = 1000 * statistics.median(record["epoch_seconds"]) / record["problems"]
        results.append(record)
    return results


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch threads of each process")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", help="also write every measurement here as JSON")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    print(f"{os.cpu_count()} CPUs; two processes of {args.threads} threads, {args.precision}, hidden {args.hidden}, "
          f"{args.epochs} epoch(s) each", flush=True)
    rows = []
    for repeat in range(args.repeats):
        order = SCENARIOS if repeat % 2 == 0 else SCENARIOS[::-1]
        for waits in order:
            started = time.perf_counter()
            results = run_pair(args, waits)
            together = sum(1000 / r["ms_per_problem"] for r in results)
            rows.append({"repeat": repeat, "waits": list(waits), "processes": results,
                         "problems_s_together": together, "wall_s": time.perf_counter() - started})
            print(f"repeat {repeat}: {waits[0]:>7} + {waits[1]:<7}  ms a problem "
                  + " / ".join(f"{r['ms_per_problem']:.1f}" for r in results)
                  + f"   together {together:.1f} problems/s", flush=True)
    print("\nmedian over repeats (ms a problem, process 1 / process 2; problems/s together):")
    for waits in SCENARIOS:
        mine = [r for r in rows if tuple(r["waits"]) == waits]
        ms = [statistics.median(r["processes"][i]["ms_per_problem"] for r in mine) for i in range(2)]
        print(f"  {waits[0]:>7} + {waits[1]:<7}  {ms[0]:.1f} / {ms[1]:.1f}   "
              f"{statistics.median(r['problems_s_together'] for r in mine):.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
