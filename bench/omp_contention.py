"""Does OpenMP spinning hurt when the CPU is shared? GTS training processes alone and side by side.

Each process trains paper-size GTS on MAWPS with ``--threads`` torch threads and one OpenMP waiting
setting, a libgomp spin count (``OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=<n>``): ``0`` (threads sleep at
once), ``3000`` (the CLI's default since this bench's sweep, flows/environment.py) up to ``300000``
(libgomp's own default). For each spin
count in ``--spincounts`` the scenarios are: ``solo`` (one process alone: the speed on an idle machine),
``pair`` (two processes with that count started at once, so two processes of two threads oversubscribe
a 2-core machine twice) and ``mixed`` (one spinning next to a passive neighbour: does a spinner slow
somebody else's job?; only for counts above 0). Each process trains ``--epochs`` epochs through the
trainer (``train_model``, no validation) and reports its seconds an epoch; the scenarios run
``--repeats`` times in alternating order, and the script prints milliseconds a problem per process and
the processes' problems per second together.

    .venv/bin/python bench/omp_contention.py --epochs 1 --repeats 2 --spincounts 0,300000 --scenarios pair,mixed
    .venv/bin/python bench/omp_contention.py --epochs 1 --repeats 2 --spincounts 0,3000,30000,300000
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
SCENARIO_KINDS = ("solo", "pair", "mixed")


def wait_env(spincount: int) -> dict[str, str]:
    return {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": str(spincount)}


def label(spincount: int) -> str:
    return "passive" if spincount == 0 else f"spin {spincount}"


def scenarios(spincounts: list[int], kinds: list[str]) -> list[tuple[int, ...]]:
    """Each scenario is the spin counts of the processes started together."""
    out: list[tuple[int, ...]] = []
    for count in spincounts:
        if "solo" in kinds:
            out.append((count,))
        if "pair" in kinds:
            out.append((count, count))
        if "mixed" in kinds and count > 0:
            out.append((count, 0))
    return out


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


def run_together(args, waits: tuple[int, ...]) -> list[dict]:
    argv = [sys.executable, __file__, "--child", "--data", args.data, "--epochs", str(args.epochs),
            "--threads", str(args.threads), "--hidden", str(args.hidden), "--precision", args.precision]
    procs = [subprocess.Popen(argv, env=os.environ | wait_env(w), stdout=subprocess.PIPE, text=True) for w in waits]
    results = []
    for wait, proc in zip(waits, procs):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a training process ({label(wait)}) failed with status {proc.returncode}")
        record = json.loads(out.strip().splitlines()[-1])
        record["spincount"] = wait
        record["ms_per_problem"] = 1000 * statistics.median(record["epoch_seconds"]) / record["problems"]
        results.append(record)
    return results


def spin_counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError(f"spin counts must be integers >= 0, comma-separated; got {text!r}")
    return counts


def scenario_kinds(text: str) -> list[str]:
    kinds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(kinds) - set(SCENARIO_KINDS))
    if not kinds or unknown:
        raise argparse.ArgumentTypeError(f"scenarios are among {', '.join(SCENARIO_KINDS)}; got {text!r}")
    return kinds


def describe(waits: tuple[int, ...]) -> str:
    return " + ".join(label(w) for w in waits)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch threads of each process")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--spincounts", type=spin_counts, default=[0, 300000],
                    help="libgomp GOMP_SPINCOUNT values to compare, comma-separated (0 = sleep at once)")
    ap.add_argument("--scenarios", type=scenario_kinds, default=["pair", "mixed"],
                    help=f"which of {', '.join(SCENARIO_KINDS)} to run for each spin count")
    ap.add_argument("--out", help="also write every measurement here as JSON")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    plan = scenarios(args.spincounts, args.scenarios)
    print(f"{os.cpu_count()} CPUs; processes of {args.threads} threads, {args.precision}, hidden {args.hidden}, "
          f"{args.epochs} epoch(s) each; {len(plan)} scenarios x {args.repeats} repeats", flush=True)
    rows = []
    for repeat in range(args.repeats):
        order = plan if repeat % 2 == 0 else plan[::-1]
        for waits in order:
            started = time.perf_counter()
            results = run_together(args, waits)
            together = sum(1000 / r["ms_per_problem"] for r in results)
            rows.append({"repeat": repeat, "spincounts": list(waits), "processes": results,
                         "problems_s_together": together, "wall_s": time.perf_counter() - started})
            print(f"repeat {repeat}: {describe(waits):>26}  ms a problem "
                  + " / ".join(f"{r['ms_per_problem']:.1f}" for r in results)
                  + f"   together {together:.1f} problems/s", flush=True)
    print("\nmedian over repeats (ms a problem, per process; problems/s together):")
    for waits in plan:
        mine = [r for r in rows if tuple(r["spincounts"]) == waits]
        ms = [statistics.median(r["processes"][i]["ms_per_problem"] for r in mine) for i in range(len(waits))]
        print(f"  {describe(waits):>26}  {' / '.join(f'{m:.1f}' for m in ms)}   "
              f"{statistics.median(r['problems_s_together'] for r in mine):.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
