"""What training a repeated value on its best-scored slot costs (GTSConfig.any_equal_slot).

Times forward+backward passes over the same MAWPS training batches (the seeded split of
bench/solver_speed.py) with the rule on and off, on the same weights, alternating in one process so
that both see the same machine load. Prints seconds per pass of the batches for each and the ratio.

    .venv/bin/python bench/equal_slot_cost.py --batches 10 --repeats 3
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()  # the CLI's OpenMP waiting (flows/environment.py), set before torch loads OpenMP

sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from mwp.readers import load_dataset  # noqa: E402
from solver_speed import split  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.trainer import length_bucketed  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--batches", type=int, default=10, help="training batches of 64 per timed pass")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    train, _, _ = split(load_dataset("mawps", args.data).problems, 0, 0.2, 0.0)
    encoding = build_encoding(train, min_count=2)
    batches = [encoding.batch(c) for c in length_bucketed(train, 64, random.Random(0))][: args.batches]
    with_repeats = sum(b.has_repeated_values for b in batches)
    models = {flag: GTSModel(GTSConfig(hidden_size=args.hidden, any_equal_slot=flag), encoding) for flag in (True, False)}
    models[False].load_state_dict(models[True].state_dict())
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for flag, model in models.items():
            model.train()
            torch.manual_seed(1)  # same dropout masks for both
            t0 = time.perf_counter()
            for batch in batches:
                model.zero_grad(set_to_none=True)
                model.loss(batch).backward()
            times[flag].append(time.perf_counter() - t0)
    on, off = min(times[True]), min(times[False])
    print(f"{len(batches)} batches of 64 ({with_repeats} with a value repeated in some text), hidden {args.hidden}, "
          f"torch threads {torch.get_num_threads()}, best of {args.repeats}")
    print(f"any_equal_slot on: {on:.2f} s; off (first slot): {off:.2f} s; ratio {on / off:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
