"""Speed and memory of one augmentation round (GECA operations 1 + 2 with their checks, default
config) over MAWPS and the Math23K training problems, at 25%, 50% and 100% of the pool.

    .venv/bin/python bench/augment_speed.py [--data ../shared/data] [--cap N]

Each size runs in a fresh child process so that the peak memory (ru_maxrss) is that size's own.
The baseline measured in the same run is the cost of reading the pool (load + build_problem).

    .venv/bin/python bench/augment_speed.py --round math23k SPLIT.json [--out FILE.json]
    .venv/bin/python bench/augment_speed.py --round sd DIR [--out FILE.json]
    .venv/bin/python bench/augment_speed.py --round mawps MAWPS.json [--out FILE.json]
    .venv/bin/python bench/augment_speed.py --round mawps-split SPLIT.json [--out FILE.json]

One round as the loop runs it, on the training side of a split (a ``compaug split`` file over Math23K, or
a ``compaug sd`` directory, or a ``compaug split`` file over MAWPS, or MAWPS's seeded random split, seed 0, as ``label_audit.py --verified`` draws it):
default config (cap included), generation, verification, consistency
checks and the leakage comparison with validation and every test set; prints the seconds of each part
(Chinese segmentation, the first time, is inside generation), verified candidates per operator with
their root templates (the first two prefix tokens: ``/ -`` is a subtraction divided) and every
rejection by reason. The round's wall seconds and CPU seconds are both printed, with the load
average: on a shared machine the wall time includes waiting for a core.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load(name: str, data: Path):
    from mwp.readers import read_math23k, read_mawps

    if name == "mawps":
        return read_mawps(data / "mawps" / "MAWPS.json").problems
    result = read_math23k(data / "math23k" / "math23k.json")
    return [p for p in result.problems if result.splits.get(p.id, "train") == "train"]


def one_size(name: str, data: Path, fraction: float, cap: int | None) -> dict:
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates

    t0 = time.perf_counter()
    pool = load(name, data)
    pool = pool[: int(len(pool) * fraction)]
    t_load = time.perf_counter() - t0
    cfg = AugmentConfig(per_round_cap=cap, seed=0)
    t1 = time.perf_counter()
    batch = generate_candidates(pool, cfg, 1)
    t_round = time.perf_counter() - t1
    by_op: dict[str, int] = {}
    for p in batch.candidates:
        by_op[p.provenance.operator] = by_op.get(p.provenance.operator, 0) + 1
    return {"dataset": name, "fraction": fraction, "pool": len(pool), "load_s": round(t_load, 2),
            "round_s": round(t_round, 2), "candidates": len(batch.candidates), "by_operator": by_op,
            "candidates_per_s": round(len(batch.candidates) / t_round, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rejected": dict(batch.rejected.most_common(8))}


def one_round(kind: str, where: Path, data: Path, operators: tuple[str, ...]) -> dict:
    """One default round on the train side of a split, with the leakage check against held-out sets."""
    from mwp.expr import to_prefix
    from mwp.readers import DataSpec, read_math23k, read_problems
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates
    from tasks.augment.leakage import HeldOut
    from tasks.loop.datasets import load_split_file, split_problems

    t0 = time.perf_counter()
    if kind == "math23k":
        problems, split = read_math23k(data / "math23k" / "math23k.json").problems, load_split_file(where)
    elif kind == "mawps":
        problems, split = DataSpec("mawps", where).load()[1], None
    elif kind == "mawps-split":  # a compaug split file over MAWPS (e.g. --method comdiv)
        problems, split = DataSpec("mawps", data / "mawps" / "MAWPS.json").load()[1], load_split_file(where)
    else:
        problems = read_problems(where / "train.jsonl").problems + read_problems(where / "test.jsonl").problems
        split = load_split_file(where / "split.json")
    train, valid, tests = split_problems(problems, 0, split=split)
    t_load = time.perf_counter() - t0
    t1 = time.perf_counter()
    held_out = HeldOut.build({"valid": valid, **tests})
    t_index = time.perf_counter() - t1
    t2, c2 = time.perf_counter(), time.process_time()
    batch = generate_candidates(train, AugmentConfig(operators=operators), 1, held_out)
    t_round, c_round = time.perf_counter() - t2, time.process_time() - c2
    by_op: dict[str, int] = {}
    roots: dict[str, dict[str, int]] = {}  # operator -> root (first two prefix tokens) -> verified candidates
    for p in batch.candidates:
        by_op[p.provenance.operator] = by_op.get(p.provenance.operator, 0) + 1
        root = " ".join(to_prefix(p.expression)[:2])
        roots.setdefault(p.provenance.operator, {})[root] = roots.get(p.provenance.operator, {}).get(root, 0) + 1
    return {"data": kind, "where": str(where), "train": len(train), "valid": len(valid),
            "tests": {k: len(v) for k, v in tests.items()}, "operators": list(operators),
            "load_s": round(t_load, 2), "held_out_index_s": round(t_index, 2),
            "round_s": round(t_round, 2), "round_cpu_s": round(c_round, 2), "verified": by_op,
            "verified_roots": {op: dict(sorted(r.items(), key=lambda kv: -kv[1])) for op, r in roots.items()},
            "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rejected": dict(sorted(batch.rejected.items()))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--cap", type=int, default=None, help="per-round cap (default: none)")
    parser.add_argument("--datasets", nargs="+", default=["mawps", "math23k"])
    parser.add_argument("--round", nargs=2, metavar=("KIND", "PATH"),
                        help="one round: math23k SPLIT.json, sd DIR, mawps MAWPS.json (seeded split) "
                             "or mawps-split SPLIT.json (a compaug split file over --data's MAWPS)")
    parser.add_argument("--operators", nargs="+", default=["geca_op1", "geca_op2"])
    parser.add_argument("--out", type=Path, help="also write the --round record here (JSON)")
    parser.add_argument("--one", nargs=2, metavar=("DATASET", "FRACTION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.round:
        record = one_round(args.round[0], Path(args.round[1]), args.data, tuple(args.operators))
        text = json.dumps(record, indent=1, ensure_ascii=False)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return 0
    if args.one:
        print(json.dumps(one_size(args.one[0], args.data, float(args.one[1]), args.cap)))
        return 0
    for name in args.datasets:
        for fraction in (0.25, 0.5, 1.0):
            cmd = [sys.executable, __file__, "--data", str(args.data), "--one", name, str(fraction)]
            if args.cap is not None:
                cmd += ["--cap", str(args.cap)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            print(out, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
