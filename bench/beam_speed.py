"""GTS beam search on MAWPS: settled problems leaving the batch vs every row kept to the end.

Both searches decode the same trained model's test side (the seeded 80/20 split of
bench/solver_speed.py) in batches of 64 sorted by length, alternately, in the same run. Prints
problems/s of each, their ratio, the decoded rows summed over steps (the work, independent of the
CPU's load) and whether both give the same expressions.

    .venv/bin/python bench/solver_speed.py --epochs 80 --valid-fraction 0 --save /tmp/gts80   # a trained model
    .venv/bin/python bench/beam_speed.py --checkpoint /tmp/gts80
    .venv/bin/python bench/beam_speed.py --epochs 10 --hidden 256      # or train a quick one here
"""
from __future__ import annotations

import argparse
import os
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
from solver_speed import checkpoint_split, split  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.gts_beam import beam_search  # noqa: E402
from solvers.registry import build_solver, load_solver  # noqa: E402
from solvers.trainer import _inference_chunks  # noqa: E402


def decode(model, encoding, problems, beam: int, batch_size: int, drop_finished: bool):
    """(seconds, rows decoded summed over steps, best ids per problem in input order)."""
    rows = []
    scores = model.decoder.scores

    def counting_scores(ctx, goal):
        rows.append(goal.shape[0])
        return scores(ctx, goal)

    model.decoder.scores = counting_scores
    out = [None] * len(problems)
    t0 = time.perf_counter()
    with torch.no_grad():
        for idx, chunk in _inference_chunks(problems, batch_size):  # the batches predict() decodes
            batch = encoding.batch(chunk, with_targets=False)
            hyps = beam_search(model.decoder, model.context(batch), batch.n_quantities, beam,
                               model.cfg.max_output_length, drop_finished=drop_finished)
            for i, h in zip(idx, hyps):
                out[i] = h.ids
    seconds = time.perf_counter() - t0
    del model.decoder.scores  # back to the class's method
    return seconds, sum(rows), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--checkpoint", help="a trained GTS (bench/solver_speed.py --save); else train --epochs here")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--seed", type=int, default=None, help="the split's seed (default: the checkpoint's, else 0)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    data = load_dataset("mawps", args.data)
    if args.checkpoint:
        solver = load_solver(args.checkpoint, device="cpu")
        _, test = checkpoint_split(solver, data.problems, args.seed)
        print(f"model: {args.checkpoint} ({solver.training_summary.get('epochs_run', '?')} epochs)", flush=True)
    else:
        seed = 0 if args.seed is None else args.seed
        train, _, test = split(data.problems, seed, 0.2, 0.0)
        solver = build_solver("gts", hidden_size=args.hidden, device="cpu")
        t0 = time.perf_counter()
        solver.fit(train, [], TrainConfig(epochs=args.epochs, seed=seed, progress=False))
        print(f"model: trained here, {args.epochs} epochs on {len(train)} problems "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    model = solver.model.eval()
    print(f"decoding {len(test)} test problems, beam {args.beam}, batch {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}", flush=True)
    times = {True: [], False: []}
    work, answers = {}, {}
    for _ in range(args.repeats):
        for drop in (False, True):
            seconds, work[drop], answers[drop] = decode(model, solver.encoding, test, args.beam, args.batch_size, drop)
            times[drop].append(seconds)
    best = {drop: min(t) for drop, t in times.items()}
    same = sum(a == b for a, b in zip(answers[True], answers[False]))
    print(f"every row kept to the end: {len(test) / best[False]:.1f} problems/s ({work[False]} rows decoded)")
    print(f"settled problems dropped:  {len(test) / best[True]:.1f} problems/s ({work[True]} rows decoded)")
    print(f"ratio {best[False] / best[True]:.2f}x time, {work[False] / work[True]:.2f}x rows; "
          f"same expression {same}/{len(test)}; best of {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
