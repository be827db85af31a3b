"""tasks/loop/sharding.py: a round's candidates scored in fixed chunks on a real 2-worker Dask LocalCluster
get exactly the scores of the single-process scoring (tiny GTS, real augmentation candidates)."""
import math
import random

import pytest

from mwp.problem import read_problems_jsonl, write_jsonl
from mwp.readers import DataSpec
from solvers.base import TrainConfig
from solvers.gts import GTSConfig
from tasks.loop.sharding import ScoringWorkers, read_candidate_lines, score_chunk_file, score_on_dask
from tasks.loop.training import SCORE_CHUNK, chunk_bounds, score_with_checkpoint, train_solver


def test_chunks_are_fixed_by_position_not_by_workers():
    assert chunk_bounds(600, 256) == [(0, 256), (256, 512), (512, 600)]
    assert chunk_bounds(256, 256) == [(0, 256)]
    assert chunk_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert chunk_bounds(0) == []
    with pytest.raises(ValueError):
        chunk_bounds(3, 0)


@pytest.fixture(scope="module")
def round_files(tmp_path_factory):
    """A pool, a checkpoint trained on it, and more than two chunks of real candidates generated from it."""
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates

    root = tmp_path_factory.mktemp("round")
    _, problems = DataSpec("builtin", None, 330, None).load()
    pool = problems[:300]
    write_jsonl(pool, root / "pool.jsonl")
    train_solver(pool, problems[300:], "gts", GTSConfig(embedding_size=16, hidden_size=16, min_count=1),
                 TrainConfig(epochs=1, batch_size=32, beam_size=2, device="cpu", progress=False), root / "ckpt")
    batch = generate_candidates(pool, AugmentConfig(per_problem_cap=20, per_round_cap=1000, seed=0), 1)
    assert len(batch.candidates) > 2 * SCORE_CHUNK + 90
    write_jsonl(batch.candidates[:2 * SCORE_CHUNK + 90], root / "candidates.jsonl")  # 3 chunks, the last partial
    return root


@pytest.fixture(scope="module")
def two_workers():
    workers = ScoringWorkers(workers=2, threads=1)
    yield workers
    workers.close()


def test_a_chunk_read_from_the_file_is_that_slice_of_it(round_files):
    everything = read_problems_jsonl(round_files / "candidates.jsonl")
    part = read_candidate_lines(round_files / "candidates.jsonl", 256, 300)
    assert [p.id for p in part] == [p.id for p in everything[256:300]]


def _same(a, b):  # bit-identical floats, NaN where NaN
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


@pytest.mark.parametrize("score", ["confidence", "loss-similarity", "random"])
def test_two_dask_workers_give_the_single_process_scores(round_files, two_workers, score):
    candidates = read_problems_jsonl(round_files / "candidates.jsonl")
    pool = {p.id: p for p in read_problems_jsonl(round_files / "pool.jsonl")}
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(two_workers.threads)  # a matrix product's sums split by thread: the workers' count here too
    try:
        alone, alone_unscorable = score_with_checkpoint(round_files / "ckpt", candidates, score, pool, seed=7,
                                                        device="cpu")
    finally:
        torch.set_num_threads(threads)
    sharded, sharded_unscorable = score_on_dask(
        two_workers.address(), round_files / "ckpt", round_files / "candidates.jsonl", round_files / "pool.jsonl",
        [c.id for c in candidates], score, 7, "cpu", two_workers.threads)
    assert _same(alone, sharded) and alone_unscorable == sharded_unscorable
    if score == "random":  # one stream per candidate id: no chunk can shift it
        assert sharded == [random.Random(f"7:{c.id}").random() for c in candidates]


def test_a_chunk_scored_in_this_process_matches_too(round_files):
    """The worker's function itself, no Dask: each fixed chunk gives the single-process slice."""
    candidates = read_problems_jsonl(round_files / "candidates.jsonl")
    alone, _ = score_with_checkpoint(round_files / "ckpt", candidates, "confidence", {}, seed=0, device="cpu")
    for start, stop in chunk_bounds(len(candidates)):
        part = score_chunk_file(str(round_files / "ckpt"), str(round_files / "candidates.jsonl"),
                                str(round_files / "pool.jsonl"), start, stop, "confidence", 0, "cpu", None)
        assert part.ids == [c.id for c in candidates[start:stop]] and _same(part.scores, alone[start:stop])


def test_an_unreachable_scheduler_is_refused_when_the_run_starts():
    with pytest.raises(ValueError, match="Dask scheduler tcp://127.0.0.1:9 is not reachable"):
        ScoringWorkers(address="tcp://127.0.0.1:9")


def test_one_worker_scores_here_and_starts_nothing():
    workers = ScoringWorkers(workers=1)
    assert workers.address() is None and not workers.sharded
