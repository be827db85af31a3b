"""Speed and memory of one augmentation round (GECA operations 1 + 2 with their checks, default
config) over MAWPS and the Math23K training problems, at 25%, 50% and 100% of the pool.

    .venv/bin/python bench/augment_speed.py [--data ../shared/data] [--cap N]

Each size runs in a fresh child process so that the peak memory (ru_maxrss) is that size's own.
The baseline measured in the same run is the cost of reading the pool (load + build_problem).
"""
from __future__ import annotations

import argparse
import json
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--cap", type=int, default=None, help="per-round cap (default: none)")
    parser.add_argument("--datasets", nargs="+", default=["mawps", "math23k"])
    parser.add_argument("--one", nargs=2, metavar=("DATASET", "FRACTION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
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
