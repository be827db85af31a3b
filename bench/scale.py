"""Scale-out figures of issue #15, each printed as a ratio of two timings taken in the same run.

1. **Study cells per hour, 1 vs 2 Dask workers.** A small study on the built-in corpus (GTS, the loop arm,
   ``--cells`` seeds, ``--cell-rounds`` rounds) runs through flows/study.py's ``study_flow`` on a Dask
   LocalCluster that the bench starts with 1 and then 2 worker processes (``--dask-address``; cores /
   workers torch threads per cell). Timed: ``study_flow`` from call to return (cells, MLflow, report);
   the cluster's start is printed apart. Each side runs in a fresh directory, so nothing is resumed.
2. **Candidates scored per second, 1 vs 2 Dask workers** (tasks/loop/sharding.py: one Dask task per
   chunk of 256, each worker loading the checkpoint from disk), beside the in-process scoring
   (training.score_with_checkpoint, cores torch threads). The checkpoint is a GTS the bench trains on
   the train side (``--epochs``); the candidates are those of one round of the loop's operators over the
   train side (up to ``--candidates``). Timed: the scoring call, clusters already started. The three
   score lists are compared bit for bit.
3. **A round's wall time as the pool grows, 1x / 2x / 4x.** Pool kx = the train side plus the first
   (k-1) x |train| verified candidates of an uncapped round over it (real augmented problems, as later
   rounds hold). On each pool one round runs as the pure functions the loop's tasks call, each timed
   (no Prefect, no MLflow, in this process): generate (the operators, verification, the held-out
   check, cap ``--round-cap``), score (the round-0 checkpoint above, in process), keep (top 20%),
   train (from scratch, ``--epochs``, best epoch on validation), evaluate (the test side, beam 5).

    PREFECT_HOME=/tmp/scale-prefect python bench/scale.py --out /tmp/scale.json         # the figures
    PREFECT_HOME=/tmp/scale-prefect python bench/scale.py --tiny --out /tmp/scale.json  # does it run
    python bench/scale.py --data ../shared/data/mawps/MAWPS.json --skip-cells            # MAWPS, parts 2-3
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()  # passive OpenMP waiting and no telemetry, before torch and Prefect load

import torch  # noqa: E402

from mwp.problem import write_jsonl  # noqa: E402
from mwp.readers import DataSpec  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.gts import GTSConfig  # noqa: E402
from tasks.loop import training  # noqa: E402
from tasks.loop.datasets import split_problems  # noqa: E402
from tasks.loop.sharding import local_cluster_kwargs, score_on_dask  # noqa: E402

CORES = os.cpu_count() or 1
SIZES = {  # (default, --tiny)
    "builtin_size": (1000, 200), "hidden": (128, 16), "embedding": (64, 16), "epochs": (3, 1),
    "candidates": (3000, 600), "round_cap": (1500, 200), "cells": (4, 2), "cell_builtin_size": (300, 100),
    "cell_epochs": (3, 1), "cell_rounds": (1, 1),
}


def _cluster(workers: int):
    from distributed import LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(**local_cluster_kwargs(workers))
    return cluster, time.perf_counter() - start


def bench_cells(args, tmp: Path) -> dict:
    from flows.study import StudyParams, study_flow

    out = {}
    for workers in (1, 2):
        cluster, started = _cluster(workers)
        try:
            params = StudyParams.model_validate({
                "name": f"scale-{workers}w", "splits": [{"name": "iid", "data": {"format": "builtin",
                                                                               "builtin_size": args.cell_builtin_size}}],
                "solvers": [{"name": "gts", "model": {"embedding_size": args.embedding, "hidden_size": args.hidden}}],
                "train": {"epochs": args.cell_epochs, "eval_every": args.cell_epochs, "beam_size": 2},
                "augment": {"per_round_cap": args.round_cap}, "arms": ["loop"], "seeds": list(range(args.cells)),
                "rounds": args.cell_rounds, "out_dir": str(tmp / "studies"), "dask_address": cluster.scheduler_address,
                "torch_threads": max(1, CORES // workers)})
            start = time.perf_counter()
            summary = study_flow(params)
            seconds = time.perf_counter() - start
        finally:
            cluster.close()
        if summary["failed"]:
            raise SystemExit(f"study cells failed with {workers} worker(s): {summary['failed']}")
        out[workers] = {"cells": args.cells, "seconds": seconds, "cells_per_hour": args.cells / seconds * 3600,
                        "cluster_start_seconds": started}
        print(f"cells, {workers} Dask worker(s): {args.cells} cells in {seconds:.1f} s = "
              f"{out[workers]['cells_per_hour']:.0f} cells/h (cluster start {started:.1f} s apart)", flush=True)
    out["ratio_2_to_1"] = out[2]["cells_per_hour"] / out[1]["cells_per_hour"]
    print(f"cells per hour, 2 workers / 1 worker: {out['ratio_2_to_1']:.2f}x", flush=True)
    return out


def _same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def _compare(a: list[float], b: list[float], keep: float = 0.2) -> dict:
    """How two score lists of the same candidates differ: scores not bit-equal, the largest difference,
    and whether the top ``keep`` (what a round keeps, ties by position) is the same set."""
    pairs = [(x, y) for x, y in zip(a, b) if not (math.isnan(x) and math.isnan(y))]
    def top(scores):
        order = sorted((i for i, v in enumerate(scores) if v == v), key=lambda i: (-scores[i], i))
        return set(order[:math.ceil(keep * len(order))])
    return {"differing": sum(x != y for x, y in pairs), "max_abs_difference": max((abs(x - y) for x, y in pairs), default=0.0),
            "same_kept_set": top(a) == top(b)}


def bench_scoring(args, tmp: Path, checkpoint: Path, candidates: list, pool_path: Path) -> dict:
    from mwp.problem import read_problems_jsonl

    path = tmp / "candidates.jsonl"
    write_jsonl(candidates, path)
    ids = [c.id for c in candidates]
    pool = {p.id: p for p in read_problems_jsonl(pool_path)}
    start = time.perf_counter()
    alone, _ = training.score_with_checkpoint(checkpoint, candidates, "confidence", pool, 0, "cpu")
    out = {"candidates": len(candidates), "in_process": {"seconds": time.perf_counter() - start, "threads": CORES}}
    print(f"scoring {len(candidates)} candidates ({len(training.chunk_bounds(len(candidates)))} chunks), "
          f"in process, {CORES} threads: {len(candidates) / out['in_process']['seconds']:.0f} candidates/s", flush=True)
    identical = True
    for workers in (1, 2):
        cluster, started = _cluster(workers)
        try:
            threads = max(1, CORES // workers)
            start = time.perf_counter()
            scores, _ = score_on_dask(cluster.scheduler_address, checkpoint, path, pool_path, ids, "confidence", 0,
                                      "cpu", threads)
            seconds = time.perf_counter() - start
        finally:
            cluster.close()
        identical &= _same(alone, scores)
        out[workers] = {"seconds": seconds, "threads": threads, "cluster_start_seconds": started,
                        "against_in_process": _compare(alone, scores)}
        print(f"  {workers} worker(s) against in process: {out[workers]['against_in_process']}", flush=True)
        print(f"scoring, {workers} Dask worker(s) x {threads} threads: {len(candidates) / seconds:.0f} candidates/s "
              f"(cluster start {started:.1f} s apart)", flush=True)
    for key in ("in_process", 1, 2):
        out[key]["candidates_per_second"] = len(candidates) / out[key]["seconds"]
    out["ratio_2_to_1"] = out[2]["candidates_per_second"] / out[1]["candidates_per_second"]
    out["ratio_1_to_in_process"] = out[1]["candidates_per_second"] / out["in_process"]["candidates_per_second"]
    out["identical_scores"] = identical
    print(f"candidates per second, 2 workers / 1 worker: {out['ratio_2_to_1']:.2f}x; 1 worker / in process: "
          f"{out['ratio_1_to_in_process']:.2f}x; scores identical in all three: {identical}", flush=True)
    return out


def one_round(args, pool: list, valid: list, test_path: Path, held_out, checkpoint: Path, work: Path) -> dict:
    """One round on ``pool``, step by step, with the pure functions the loop's tasks call."""
    from ranking.retention import Scored, retain
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates

    seconds = {}
    start = time.perf_counter()
    batch = generate_candidates(pool, AugmentConfig(per_round_cap=args.round_cap, seed=0), 1, held_out)
    seconds["generate"] = time.perf_counter() - start
    by_id = {p.id: p for p in pool}
    start = time.perf_counter()
    scores, _ = training.score_with_checkpoint(checkpoint, batch.candidates, "confidence", by_id, 0, "cpu")
    seconds["score"] = time.perf_counter() - start
    start = time.perf_counter()
    kept, _ = retain("top-fraction", [Scored(c.id, s, c.provenance.operator)
                                      for c, s in zip(batch.candidates, scores)], 0.2)
    chosen = {k.id for k in kept}
    seconds["keep"] = time.perf_counter() - start
    train = list(pool) + [c for c in batch.candidates if c.id in chosen]
    start = time.perf_counter()
    training.train_solver(train, valid, "gts", GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden),
                          TrainConfig(epochs=args.epochs, eval_every=args.epochs, device="cpu", progress=False),
                          work / "checkpoint")
    seconds["train"] = time.perf_counter() - start
    start = time.perf_counter()
    training.evaluate_checkpoint(work / "checkpoint", {"test": test_path}, 5, "cpu")
    seconds["evaluate"] = time.perf_counter() - start
    return {"pool": len(pool), "candidates": len(batch.candidates), "kept": len(chosen), "trained_on": len(train),
            "seconds": seconds, "total": sum(seconds.values())}


def bench_rounds(args, tmp: Path, train: list, valid: list, test: list, extras: list, checkpoint: Path) -> dict:
    from tasks.augment.leakage import HeldOut

    test_path = tmp / "test.jsonl"
    write_jsonl(test, test_path)
    held_out = HeldOut.build({"valid": valid, "test": test})
    out = {}
    for factor in (1, 2, 4):
        need = (factor - 1) * len(train)
        if need > len(extras):
            print(f"pool {factor}x: needs {need} augmented problems, one round made {len(extras)}: not measured")
            continue
        work = tmp / f"round-{factor}x"
        work.mkdir()
        out[factor] = one_round(args, train + extras[:need], valid, test_path, held_out, checkpoint, work)
        steps = ", ".join(f"{k} {v:.1f}" for k, v in out[factor]["seconds"].items())
        print(f"round on pool {factor}x ({out[factor]['pool']} problems, {out[factor]['candidates']} candidates, "
              f"{out[factor]['kept']} kept): {out[factor]['total']:.1f} s ({steps})", flush=True)
    for factor in (2, 4):
        if factor in out:
            ratio = {k: v / max(out[1]["seconds"][k], 1e-9) for k, v in out[factor]["seconds"].items()}
            out[f"ratio_{factor}x_to_1x"] = {"total": out[factor]["total"] / out[1]["total"], **ratio}
            print(f"pool {factor}x / 1x: round {out[f'ratio_{factor}x_to_1x']['total']:.2f}x ("
                  + ", ".join(f"{k} {v:.2f}x" for k, v in ratio.items()) + ")", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="a MAWPS JSON file (default: the built-in corpus)")
    ap.add_argument("--tiny", action="store_true", help="every size small: checks that the bench runs (not figures)")
    for name, (default, tiny) in SIZES.items():
        ap.add_argument("--" + name.replace("_", "-"), type=int, help=f"default {default}; --tiny {tiny}")
    ap.add_argument("--skip-cells", action="store_true", help="leave out part 1 (the study cells)")
    ap.add_argument("--skip-rounds", action="store_true", help="leave out part 3 (a round's time by pool size)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    for name, (default, tiny) in SIZES.items():
        if getattr(args, name) is None:
            setattr(args, name, tiny if args.tiny else default)
    torch.set_num_threads(CORES)
    print(f"{CORES} cores, load average {os.getloadavg()[0]:.1f}; GTS hidden {args.hidden}, {args.epochs} epochs",
          flush=True)
    results: dict = {"cores": CORES, "load_average_start": os.getloadavg()[0],
                     "settings": {k: getattr(args, k) for k in SIZES} | {"data": str(args.data or "builtin")}}
    with tempfile.TemporaryDirectory(prefix="compaug-scale-") as name:
        tmp = Path(name)
        if not args.skip_cells:
            results["cells"] = bench_cells(args, tmp)
        from tasks.augment.base import AugmentConfig
        from tasks.augment.generate import generate_candidates

        spec = DataSpec("mawps", args.data, 3000, None) if args.data else DataSpec("builtin", None, args.builtin_size)
        _, problems = spec.load()
        train, valid, tests = split_problems(problems, 0)
        test = tests["iid"]
        write_jsonl(train, tmp / "pool.jsonl")
        start = time.perf_counter()
        training.train_solver(train, valid, "gts", GTSConfig(embedding_size=args.embedding, hidden_size=args.hidden),
                              TrainConfig(epochs=args.epochs, eval_every=args.epochs, device="cpu", progress=False),
                              tmp / "round0")
        print(f"round-0 GTS: {len(train)} train problems, {args.epochs} epochs, {time.perf_counter() - start:.0f} s",
              flush=True)
        extras = generate_candidates(train, AugmentConfig(per_round_cap=None, seed=0), 1).candidates
        results["scoring"] = bench_scoring(args, tmp, tmp / "round0", extras[:args.candidates], tmp / "pool.jsonl")
        if not args.skip_rounds:
            results["rounds"] = bench_rounds(args, tmp, train, valid, test, extras, tmp / "round0")
    results["load_average_end"] = os.getloadavg()[0]
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
