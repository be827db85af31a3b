"""The baseline solvers (lstm, transformer, bert-gts, gpt2) on MAWPS: epoch seconds, inference
problems/s at beam 5, and test answer accuracy (best epoch chosen on a validation slice of train).

Same seeded split as bench/solver_speed.py (80/20, then 10% of train for selection).

    .venv/bin/python bench/baselines_mawps.py --solver lstm --epochs 30
    .venv/bin/python bench/baselines_mawps.py --solver bert-gts --set pretrained_path=/path/to/minilm --epochs 20
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()  # the CLI's OpenMP waiting (flows/environment.py), set before torch loads OpenMP

import torch  # noqa: E402

from bench.solver_speed import split  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.evaluate import evaluate_predictions  # noqa: E402
from solvers.registry import build_solver  # noqa: E402


def parse_overrides(pairs: list[str]) -> dict:
    """``key=value`` pairs; values are int, float or str (parsed, never evaluated)."""
    out = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        for cast in (int, float):
            try:
                out[key] = cast(raw)
                break
            except ValueError:
                continue
        else:
            out[key] = raw
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", required=True, choices=["lstm", "transformer", "bert-gts", "gpt2"])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--valid-fraction", type=float, default=0.1)
    ap.add_argument("--set", nargs="*", default=[], help="solver config fields, key=value")
    ap.add_argument("--out", help="write the figures as JSON here")
    ap.add_argument("--save", help="save the trained solver into this directory")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    data = load_dataset("mawps", args.data)
    train, valid, test = split(data.problems, args.seed, 0.2, args.valid_fraction)
    solver = build_solver(args.solver, **parse_overrides(args.set))
    print(f"{args.solver} {solver.config}; train {len(train)} / valid {len(valid)} / test {len(test)}", flush=True)
    config = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, eval_every=args.eval_every,
                         beam_size=args.beam, seed=args.seed, progress=False)

    def report(stats):
        acc = "" if stats.valid_answer_acc is None else f" valid answer acc {stats.valid_answer_acc:.3f}"
        print(f"epoch {stats.epoch}: loss {stats.train_loss:.3f}, {stats.seconds:.1f} s{acc}", flush=True)

    result = solver.fit(train, valid, config, on_epoch=report)
    if args.save:
        solver.save(args.save)
    n_params = sum(p.numel() for p in solver.model.parameters())
    t0 = time.perf_counter()
    predictions = solver.predict(test, beam_size=args.beam)
    infer_s = time.perf_counter() - t0
    rep = evaluate_predictions(test, predictions)
    figures = {
        "solver": args.solver, "config": {k: v for k, v in vars(solver.config).items()}, "parameters": n_params,
        "epochs": len(result.epochs), "best_epoch": result.best_epoch,
        "epoch_seconds_median": sorted(e.seconds for e in result.epochs)[len(result.epochs) // 2],
        "test_answer_acc": rep.answer_acc, "test_equation_acc": rep.equation_acc, "test_invalid_rate": rep.invalid_rate,
        "inference_problems_per_s": len(test) / infer_s, "beam": args.beam,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(figures, indent=2), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
