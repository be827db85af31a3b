"""Any registered solver (lstm, transformer, convs2s, mathen, bert-gts, gpt2, gts) on MAWPS: epoch
seconds, training and inference problems/s, and test answer accuracy (best epoch chosen on a
validation slice of train); for mathen also each member's test accuracy (from the same beams the
ensemble selects from).

Without ``--split-file``: the same seeded split as bench/solver_speed.py (80/20, then 10% of train for
selection). With one (``compaug split`` writes them): its test side, and ``--valid-fraction`` of its
train side for selection, split by ``--seed`` as the loop does (tasks/loop/datasets.py).

    .venv/bin/python bench/baselines_mawps.py --solver lstm --epochs 30
    .venv/bin/python bench/baselines_mawps.py --solver bert-gts --set pretrained_path=/path/to/minilm --epochs 20
    .venv/bin/python bench/baselines_mawps.py --solver mathen --split-file runs/splits/mawps-comdiv-c0.77.json \
        --set 'member_options={"lstm": {"encoder_layers": 1}}'
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
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
from solvers.registry import SOLVERS, build_solver  # noqa: E402
from tasks.loop.datasets import load_split_file, split_problems  # noqa: E402


def parse_overrides(pairs: list[str]) -> dict:
    """``key=value`` pairs; a value is JSON when it parses as JSON (numbers, true/false, lists,
    objects), else a plain string such as a path (parsed, never evaluated)."""
    out = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", required=True, choices=SOLVERS)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--valid-fraction", type=float, default=0.1)
    ap.add_argument("--split-file", help="a split file (compaug split): its test side is the test set")
    ap.add_argument("--set", nargs="*", default=[], help="solver config fields, key=value")
    ap.add_argument("--out", help="write the figures as JSON here")
    ap.add_argument("--save", help="save the trained solver into this directory")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    data = load_dataset("mawps", args.data)
    if args.split_file:
        train, valid, tests = split_problems(data.problems, args.seed, 0.2, args.valid_fraction,
                                             load_split_file(args.split_file))
        (test,) = tests.values()
    else:
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
    models = [m.model for m in solver.members.values()] if hasattr(solver, "members") else [solver.model]
    n_params = sum(p.numel() for model in models for p in model.parameters())
    members = {}
    t0 = time.perf_counter()
    if hasattr(solver, "member_predictions"):  # an ensemble: score every member on the beams it selects from
        per_member = solver.member_predictions(test, beam_size=args.beam)
        predictions = solver.select(per_member)
        for name, preds in per_member.items():
            member = evaluate_predictions(test, preds)
            members[name] = {"test_answer_acc": member.answer_acc, "test_equation_acc": member.equation_acc,
                             "selected": sum(p is q for p, q in zip(predictions, preds)) / len(test)}
    else:
        predictions = solver.predict(test, beam_size=args.beam)
    infer_s = time.perf_counter() - t0
    rep = evaluate_predictions(test, predictions)
    # an ensemble's epoch is one epoch of each member (mathen numbers member i's epochs i * E + 1 ...)
    by_member: dict[int, list[float]] = {}
    for e in result.epochs:
        by_member.setdefault((e.epoch - 1) // args.epochs, []).append(e.seconds)
    epoch_seconds = sum(sorted(times)[len(times) // 2] for times in by_member.values())
    figures = {
        "solver": args.solver, "config": dataclasses.asdict(solver.config), "parameters": n_params,
        "split": args.split_file or "seeded-random", "seed": args.seed,
        "train": len(train), "valid": len(valid), "test": len(test),
        "epochs": len(result.epochs), "best_epoch": result.best_epoch, "members": members,
        "epoch_seconds_median": epoch_seconds, "train_problems_per_s": len(train) / epoch_seconds,
        "train_seconds": result.seconds, "load_average_1m": os.getloadavg()[0],
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
