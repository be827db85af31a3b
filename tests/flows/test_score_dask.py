"""A tiny loop run whose round-1 candidates are scored on a 2-worker Dask LocalCluster (``score_workers=2``)
scores, keeps and trains exactly as the run that scores them in its own process."""
import dataclasses
import math

from flows.augment_loop import augment_loop
from flows.params import LoopParams
from tasks.loop import rundir
from tasks.loop.training import SCORE_CHUNK


def _params(out, **extra) -> LoopParams:
    return LoopParams.model_validate({
        "data": {"format": "builtin", "builtin_size": 300},
        "solver": {"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16, "min_count": 1}},
        "train": {"epochs": 1, "batch_size": 32, "beam_size": 2},
        "augment": {"per_problem_cap": 20, "per_round_cap": 700},
        "rounds": 1, "seed": 2, "out_dir": str(out), **extra})


def _scored(run_dir, name):
    return [(p.id, "nan" if math.isnan(s) else s) for p, s in rundir.read_scored(rundir.round_dir(run_dir, 1) / name)]


def test_two_scoring_workers_give_the_same_scores_and_kept_set(prefect_harness, tmp_path):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a matrix product's sums split by thread: one thread here as in each worker
    try:
        here = augment_loop(_params(tmp_path / "one"))
        sharded = augment_loop(_params(tmp_path / "two", score_workers=2, score_threads=1))
    finally:
        torch.set_num_threads(threads)
    assert here["run_dir"].name == sharded["run_dir"].name  # where it is scored is not part of the run's identity
    scored = _scored(here["run_dir"], "scored.jsonl")
    assert len(scored) > SCORE_CHUNK  # two chunks at least, so the sharding is exercised
    assert scored == _scored(sharded["run_dir"], "scored.jsonl")  # ids in the same order, bit-identical scores
    assert _scored(here["run_dir"], "kept.jsonl") == _scored(sharded["run_dir"], "kept.jsonl")
    same = [dataclasses.replace(r, train_seconds=0.0, round_seconds=0.0) for r in here["rounds"]]
    assert same == [dataclasses.replace(r, train_seconds=0.0, round_seconds=0.0) for r in sharded["rounds"]]
