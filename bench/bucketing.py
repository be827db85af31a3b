"""What TrainConfig.bucketing changes in a training's batches: the decoder's sequential steps an epoch, the text
tokens, and for the graphed steps the rounded shapes to capture.

Per dataset (bench/gpu_speed.py's 80/20 split, seed 0; the problems the GTS vocabularies express) and per
bucketing, over ``--epochs`` epochs of the trainer's batches (batch 64, the trainer's order for seed 0, drawn on
across epochs as train_model draws it): per epoch the decoder's steps (tree waves, the repeated-value rule's waits
counted: each batch its deepest problem's; what the row-wise pass runs one after another), the encoder's tokens
(each batch its longest text), and the padded pass's rounded waves and tokens at step graphed-whole's coarse
rounding (what a captured replay runs); over all epochs the distinct rounded shapes (captures) of graphed and
graphed-whole, and how many of them are rare (met fewer than 2, 5, 10 times). No model pass runs: these are plans,
the same on any machine. What a step costs on a GPU is not here (bench/gpu_speed.py; bench/fusion_ops.py
--bucketing counts a captured pass's dispatches on the CPU).

    .venv/bin/python bench/bucketing.py --out docs/measurements/bucketing.json
    .venv/bin/python bench/bucketing.py --datasets mawps --epochs 3   # quick
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

import torch  # noqa: E402

from bench.gpu_speed import trained_side  # noqa: E402
from solvers.base import BUCKETINGS, GRAPHED_STEPS  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_graphs import ShapeFixedLoss  # noqa: E402
from solvers.trainer import length_bucketed  # noqa: E402


def epochs_of(kept, encoding, model, bucketing: str, epochs: int, batch_size: int) -> dict:
    """The figures above for one bucketing: per epoch and the distinct shapes over all epochs."""
    steps = model.decoder_steps(encoding, kept)
    sort_by = steps if bucketing == "steps" else None
    shape_fixed = {step: ShapeFixedLoss(model, batch_size, torch.device("cpu"), graphed=False,
                                        whole=step == "graphed-whole") for step in GRAPHED_STEPS}
    shapes: dict[str, dict] = {step: {} for step in GRAPHED_STEPS}
    index = {id(p): i for i, p in enumerate(kept)}
    rng = random.Random(0)  # the trainer's: random.Random(config.seed), drawn on across epochs
    per_epoch = []
    for epoch in range(1, epochs + 1):
        row = {"batches": 0, "decoder_steps": 0, "tokens": 0, "padded_waves": 0, "padded_tokens": 0}
        for chunk in length_bucketed(kept, batch_size, rng, sort_by):
            batch = encoding.batch(chunk)
            row["batches"] += 1
            row["decoder_steps"] += max(steps[index[id(p)]] for p in chunk)
            row["tokens"] += batch.tokens.shape[1]
            for step, loss in shape_fixed.items():
                key = loss.key_and_plan(batch)[0]
                shapes[step].setdefault(key, [epoch, 0])[1] += 1  # first epoch, batches of the shape
                if step == "graphed-whole":
                    row["padded_tokens"] += key[0]
                    row["padded_waves"] += key[3]
        per_epoch.append(row)
    return {"per_epoch": per_epoch,
            "shapes": {step: len(seen) for step, seen in shapes.items()},
            "first_epoch_shapes": {step: sum(e == 1 for e, _ in seen.values()) for step, seen in shapes.items()},
            "rare_shapes": {step: rare_shapes([n for _, n in seen.values()]) for step, seen in shapes.items()}}


RARE = (2, 5, 10)  # the rare_shapes thresholds


def rare_shapes(batches: list[int]) -> dict[str, list[int]]:
    """For a training's shapes (``batches``: how many batches each holds): per k, the shapes met fewer than k times
    and their batches, what a step that captured a shape only at its k-th batch would run eagerly instead of
    capturing (besides each other shape's first k - 1 batches)."""
    return {str(k): [sum(n < k for n in batches), sum(n for n in batches if n < k)] for k in RARE}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="mawps,math23k")
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    report: dict = {"args": vars(args), "datasets": {}}
    for dataset in args.datasets.split(","):
        _, encoding, kept = trained_side(dataset)
        model = GTSModel(GTSConfig(embedding_size=8, hidden_size=16), encoding)  # plans need its vocabularies only
        figures = report["datasets"][dataset] = {"problems": len(kept)}
        for bucketing in BUCKETINGS:
            row = figures[bucketing] = epochs_of(kept, encoding, model, bucketing, args.epochs, args.batch_size)
            epochs = row["per_epoch"]
            mean = {k: statistics.mean(e[k] for e in epochs) for k in epochs[0]}
            row["mean_epoch"] = mean
            print(f"{dataset} ({len(kept)} problems, {mean['batches']:.0f} batches an epoch), bucketing {bucketing}: "
                  f"an epoch (mean of {len(epochs)}) {mean['decoder_steps']:.0f} decoder steps, {mean['tokens']:.0f} "
                  f"tokens; graphed-whole's padded pass {mean['padded_waves']:.0f} waves, {mean['padded_tokens']:.0f} "
                  f"tokens; shapes over {len(epochs)} epochs: "
                  + ", ".join(f"{step} {n} ({row['first_epoch_shapes'][step]} in the first)"
                              for step, n in row["shapes"].items()), flush=True)
            rare = row["rare_shapes"]["graphed-whole"]
            print(f"  graphed-whole's shapes met fewer than k times over {len(epochs)} epochs (shapes, their batches): "
                  + ", ".join(f"k {k}: {rare[str(k)][0]} ({rare[str(k)][1]})" for k in RARE), flush=True)
        base, steps = (figures[b]["mean_epoch"] for b in BUCKETINGS)
        print(f"{dataset}: steps against length: decoder steps {steps['decoder_steps'] / base['decoder_steps']:.2f}x, "
              f"tokens {steps['tokens'] / base['tokens']:.2f}x, padded waves "
              f"{steps['padded_waves'] / base['padded_waves']:.2f}x, padded tokens "
              f"{steps['padded_tokens'] / base['padded_tokens']:.2f}x", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
