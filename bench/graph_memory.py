"""How much GPU memory would the graphed step's captures hold? Counted on the CPU from tensor shapes.

A graphed training (``TrainConfig.step = "graphed"``, solvers/gts_graphs.py) captures the decoder's loss
pass once per rounded batch shape and keeps every capture for the training's life (the padded wave pass,
shapes (T, L, Q, W, R, H0, M0, A, rule); with ``--teacher-pass positions`` the dense pass, shapes (T, L, Q, K))
(``--step graphed-whole``: the encoder's and the decoder's pass). What a capture keeps is its static inputs
and what its backward graph writes (the inputs' gradients and one gradient of every parameter the pass
uses); what its forward saves for the backward is freed when
the capture ends and is scratch the next capture in the shared pool reuses. This script walks the
trainer's batches (its shuffled length buckets, seed 0, paper-size GTS, batch 64, on the 80/20 seed-0
split ``bench/gpu_speed.py`` trains on) over ``--epochs`` epochs, and for the first batch of each rounded
shape runs the pass on the ``meta`` device (:func:`solvers.gts_graphs.capture_footprint`: shapes, no
values; it also fails if the pass reads anything back to the host). It prints per dataset the shapes,
the bytes kept per capture (median, largest), their sum over all shapes (what a training holds after
``--epochs`` epochs) and the largest saved-for-backward scratch (the pool needs at least that once).

Not counted (a GPU run measures them: bench/gpu_speed.py's peak memory): the caching allocator's rounding
and fragmentation of the shared pool, the CUDA graphs' own memory, the encoder's eager activations, the
model, its gradients and Adam's state.

    .venv/bin/python bench/graph_memory.py --out docs/measurements/graph-memory.json
    .venv/bin/python bench/graph_memory.py --datasets mawps --epochs 3 --hidden 64 --embedding 16   # quick
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

import torch  # noqa: E402

from bench.gpu_speed import DATA, split  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solvers.base import GRAPH_ROUNDINGS, GRAPHED_STEPS  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.gts_decoder import TEACHER_PASSES  # noqa: E402
from solvers.gts_graphs import ShapeFixedLoss, capture_footprint  # noqa: E402
from solvers.trainer import expressible, length_bucketed  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402

MIB = 2 ** 20


def batches_by_shape(train, encoding, step: ShapeFixedLoss, batch_size: int, epochs: int) -> dict:
    """The first batch of each rounded shape of ``step`` over ``epochs`` epochs of the trainer's batches (seed 0),
    in the order the shapes first come; and the epoch each new shape came in."""
    first, came = {}, {}
    rng = random.Random(0)  # the trainer's: random.Random(config.seed), drawn on across epochs
    for epoch in range(1, epochs + 1):
        for chunk in length_bucketed(train, batch_size, rng):
            batch = encoding.batch(chunk)
            key = step.key_and_plan(batch)[0]
            if key not in first:
                first[key], came[key] = batch, epoch
    return {"first": first, "came": came}


def footprints(step: ShapeFixedLoss, shapes: dict) -> dict:
    """Each shape's :class:`CaptureFootprint`, from its first batch padded as the trainer pads it (the pass of
    ``step``: with ``whole``, the one step ``graphed-whole`` captures, the encoder's too)."""
    meta = copy.deepcopy(step.loss_module()).to("meta")
    out = {}
    for key, batch in shapes.items():
        _, args = step.padded_args(batch)  # requires_grad as in training
        out[key] = capture_footprint(meta, args)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="mawps,math23k")
    ap.add_argument("--epochs", type=int, default=80, help="epochs of the trainer's batches walked (80: the paper's)")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--embedding", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--step", default="graphed", choices=GRAPHED_STEPS,
                    help="whose captures: graphed (the decoder's pass) or graphed-whole (the encoder's with it)")
    ap.add_argument("--teacher-pass", default="waves", choices=TEACHER_PASSES,
                    help="the padded pass captured: by tree levels (waves) or by prefix positions (the dense pass)")
    ap.add_argument("--rounding", default="coarse", choices=GRAPH_ROUNDINGS,
                    help="how the wave pass's shapes are rounded (TrainConfig.graph_rounding)")
    ap.add_argument("--shapes-only", action="store_true", help="count the shapes alone (no meta pass a shape)")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    report: dict = {"torch": torch.__version__, "args": vars(args), "datasets": {}}
    for name in args.datasets.split(","):
        t0 = time.perf_counter()
        train, _ = split(list(load_dataset(name, DATA[name]).problems))
        encoding = build_encoding(train, min_count=GTSConfig.min_count)
        kept_train = [p for p in train if expressible(encoding, p)]
        torch.manual_seed(0)
        model = GTSModel(GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden,
                                   teacher_pass=args.teacher_pass), encoding).train()
        step = ShapeFixedLoss(model, args.batch_size, torch.device("cpu"), graphed=False,
                              whole=args.step == "graphed-whole", rounding=args.rounding)
        shapes = batches_by_shape(kept_train, encoding, step, args.batch_size, args.epochs)
        by_epoch = {e: sum(1 for c in shapes["came"].values() if c <= e) for e in (1, 3, 10, 40, args.epochs)
                    if e <= args.epochs}
        if args.shapes_only:
            report["datasets"][name] = {"train": len(kept_train), "shapes": len(shapes["first"]),
                                        "shapes_by_epoch": by_epoch, "seconds": time.perf_counter() - t0}
            print(f"{name} ({args.step}, {args.teacher_pass}, {args.rounding}): {len(shapes['first'])} shapes over "
                  f"{args.epochs} "
                  f"epochs (by epoch {by_epoch}); footprints not counted (--shapes-only)", flush=True)
            continue
        prints = footprints(step, shapes["first"])
        kept = [f.kept for f in prints.values()]
        saved = [f.saved for f in prints.values()]
        decoder_params = sum(p.numel() * p.element_size() for p in model.decoder.parameters())
        encoder_params = sum(p.numel() * p.element_size() for p in model.encoder.parameters())
        row = {"train": len(kept_train), "unencodable": len(train) - len(kept_train), "shapes": len(prints),
               "shapes_by_epoch": by_epoch, "decoder_param_mib": decoder_params / MIB,
               "encoder_param_mib": encoder_params / MIB,
               "kept_mib_median": statistics.median(kept) / MIB, "kept_mib_max": max(kept) / MIB,
               "kept_mib_total": sum(kept) / MIB, "saved_mib_max": max(saved) / MIB,
               "saved_mib_median": statistics.median(saved) / MIB,
               "largest_shape": list(max(prints, key=lambda k: prints[k].kept + prints[k].saved)),
               "seconds": time.perf_counter() - t0}
        report["datasets"][name] = row
        print(f"{name} ({args.step}, {args.teacher_pass}, {args.rounding}): {row['train']} train "
              f"({row['unencodable']} unencodable), "
              f"{row['shapes']} "
              f"shapes over {args.epochs} epochs (by epoch {by_epoch}); decoder parameters "
              f"{row['decoder_param_mib']:.1f} MiB, encoder's {row['encoder_param_mib']:.1f} MiB; "
              f"kept a capture median {row['kept_mib_median']:.1f} MiB, largest {row['kept_mib_max']:.1f}, "
              f"all captures {row['kept_mib_total']:.0f} MiB; saved for backward largest "
              f"{row['saved_mib_max']:.0f} MiB (median {row['saved_mib_median']:.0f}); {row['seconds']:.0f} s",
              flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
