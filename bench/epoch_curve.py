"""Test accuracy at every validated epoch of one round's training, beside validation: does the epoch the
trainer keeps (the first at validation's maximum) stand for the epochs validation cannot tell apart?

A loop round selects its epoch on validation only. Where validation saturates (on an SD split it holds
training-like parts, and reaches 1.000 within a few epochs) every later epoch ties, and the trainer keeps
the first. This script trains a finished round again from its run directory (its pool, validation set,
parameters and seed: the same trajectory, checked against the round's own ``epochs.json``) and evaluates
the test sets at each validated epoch. The test figures are a diagnostic read after the fact; nothing
here selects on them.

    .venv/bin/python bench/epoch_curve.py RUN_DIR --round 7 [--round 6] [--labels SPLIT_FILE] --out FILE.json

``--labels``: an SD split file, whose per-problem labels (structural, lexical) give those columns too.
Prints, per round, a line per validated epoch and a summary: the test accuracy of the epoch each
tie-break keeps (``first``, ``valid-loss``: solvers/base.py TrainConfig.tie_break) against the range, mean
and last value over the epochs tied at the validation maximum.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def round_curve(run_dir: Path, round_index: int, labels: dict[str, str]) -> dict:
    from flows.params import LoopParams
    from mwp.problem import read_problems_jsonl
    from solvers.evaluate import evaluate_predictions
    from solvers.registry import build_solver
    from tasks.loop import rundir

    params = LoopParams.model_validate(json.loads((run_dir / "params.json").read_text(encoding="utf-8")))
    configs = params.configs()
    rd = rundir.round_dir(run_dir, round_index)
    pool = read_problems_jsonl(rd / "pool.jsonl")
    valid = read_problems_jsonl(run_dir / "data" / "valid.jsonl")
    tests = {p.stem.removeprefix("test_"): read_problems_jsonl(p) for p in sorted((run_dir / "data").glob("test_*.jsonl"))}
    recorded = json.loads((rd / "epochs.json").read_text(encoding="utf-8")) if (rd / "epochs.json").exists() else []
    epochs = configs.loop.round_epochs(round_index, configs.train.epochs)
    # the loss is read whatever rule the run had: the trajectory does not depend on it, both rules are read off
    train_config = replace(configs.train, epochs=epochs, resume_dir=None, progress=False, tie_break="valid-loss")
    solver = build_solver(configs.solver_name, config=configs.solver, device=train_config.device)
    rows: list[dict] = []

    def on_epoch(stats) -> None:
        if stats.valid_answer_acc is None:
            return
        row = {"epoch": stats.epoch, "train_loss": stats.train_loss, "valid": stats.valid_answer_acc,
               "valid_loss": stats.valid_loss}
        for name, problems in tests.items():
            predictions = solver.predict(problems, configs.train.beam_size)
            report = evaluate_predictions(problems, predictions)
            row[name] = report.answer_acc
            for label in sorted(set(labels.get(p.id) for p in problems) - {None}):
                chosen = [(p, pr) for p, pr in zip(problems, predictions) if labels.get(p.id) == label]
                row[f"{name}:{label}"] = evaluate_predictions([p for p, _ in chosen], [pr for _, pr in chosen]).answer_acc
        rows.append(row)
        shown = ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k not in ("epoch", "train_loss") and v is not None)
        print(f"round {round_index} epoch {stats.epoch}/{epochs}: loss {stats.train_loss:.4f}, {shown}", flush=True)

    started = time.perf_counter()
    result = solver.fit(pool, valid, train_config, on_epoch)
    same = [r["valid"] for r in rows] == [e["valid_answer_acc"] for e in recorded if e.get("valid_answer_acc") is not None]
    best = max(r["valid"] for r in rows)
    tied = [r for r in rows if r["valid"] == best]
    first, by_loss = tied[0], min(tied, key=lambda r: r["valid_loss"])
    assert by_loss["epoch"] == result.best_epoch
    main = next(iter(tests))
    summary = {"first_epoch": first["epoch"], "first_test": first[main], "valid_loss_epoch": by_loss["epoch"],
               "valid_loss_test": by_loss[main], "valid_max": best, "tied_epochs": [r["epoch"] for r in tied],
               "tied_test_min": min(r[main] for r in tied),
               "tied_test_max": max(r[main] for r in tied), "tied_test_mean": statistics.fmean(r[main] for r in tied),
               "last_tied_test": tied[-1][main], "last_epoch_test": rows[-1][main]}
    return {"run_dir": str(run_dir), "round": round_index, "pool": len(pool), "epochs": epochs, "test_set": main,
            "reproduces_recorded_validation": same, "seconds": time.perf_counter() - started,
            "rows": rows, "summary": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--round", type=int, action="append", required=True, dest="rounds")
    parser.add_argument("--labels", type=Path, help="SD split file with per-problem labels")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    labels = json.loads(args.labels.read_text(encoding="utf-8")).get("labels", {}) if args.labels else {}
    results = []
    for r in args.rounds:
        results.append(round_curve(args.run_dir, r, labels))
        s = results[-1]["summary"]
        print(f"round {r}: first tied epoch {s['first_epoch']} ({results[-1]['test_set']} {s['first_test']:.3f}), "
              f"lowest valid loss {s['valid_loss_epoch']} ({s['valid_loss_test']:.3f}); "
              f"{len(s['tied_epochs'])} epochs tied at valid {s['valid_max']:.3f}: test {s['tied_test_min']:.3f}-"
              f"{s['tied_test_max']:.3f}, mean {s['tied_test_mean']:.3f}, last tied {s['last_tied_test']:.3f}; "
              f"recorded validation reproduced: {results[-1]['reproduces_recorded_validation']}", flush=True)
        args.out.write_text(json.dumps({"command": sys.argv, "rounds": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
